import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// One `ReceiptOpener` per app and platform, made on first use from the app's 0600 server identity file and kept.
/// The topic a receipt is bound to is the device's app: the APNs topic (bundle id) for iPhones, the Android
/// application id for FCM devices.
actor AppReceiptOpeners {
    private struct Key: Hashable {
        var appID: String
        var platform: PushPlatform
        var identityPath: String
        var topic: String
    }

    private var openers: [Key: ReceiptOpener] = [:]

    /// The opener of `app`'s receipts from devices on `platform`.
    /// - Throws: ``GatewayAPIError`` `unavailable` (503) when the identity file cannot be read; the message names
    ///   the app, never the key.
    func opener(for app: GatewayApp, platform: PushPlatform) throws -> ReceiptOpener {
        let topic = platform == .fcm ? (app.fcm?.applicationID ?? "") : app.topic
        let key = Key(appID: app.id, platform: platform, identityPath: app.serverIdentityPath, topic: topic)
        if let opener = openers[key] { return opener }
        do {
            let opener = try ReceiptOpener(identity: try ServerIdentity(contentsOfFile: app.serverIdentityPath), topic: topic)
            openers = openers.filter { $0.key.appID != app.id || $0.key.platform != platform }
            openers[key] = opener
            return opener
        } catch let error as SealedPushError {
            throw GatewayAPIError(
                .serviceUnavailable, "unavailable",
                "app \(app.id): its server identity or topic is not usable (\(error.code)); the operator must fix "
                    + "the app's configuration")
        }
    }
}
