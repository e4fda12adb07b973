import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// `ReceiptOpener`s per app, platform and server identity, made on first use from the app's 0600 identity files
/// and kept. The topic a receipt is bound to is the device's app: the APNs topic (bundle id) for iPhones, the
/// Android application id for FCM devices.
///
/// A device seals its receipt to the identity that sealed the notification (`Specs/control-v1.md` §4), so after
/// `identity rotate` receipts arrive for the new identity and, from notifications sealed before, for the previous
/// ones: the opener is the one whose key id the receipt names, among the app's current and previous identities.
actor AppReceiptOpeners {
    private struct Key: Hashable {
        var appID: String
        var platform: PushPlatform
        var identityPath: String
        var topic: String
    }

    private var openers: [Key: ReceiptOpener] = [:]

    /// The opener of `app`'s receipts from devices on `platform` sealed to the server key `recipientKeyID`: the
    /// current identity's or a previous one's; nil when none of the app's identities has that key id.
    /// - Throws: ``GatewayAPIError`` `unavailable` (503) when an identity file cannot be read; the message names
    ///   the app, never the key.
    func opener(for app: GatewayApp, platform: PushPlatform, recipientKeyID: KeyID) throws -> ReceiptOpener? {
        let topic = platform == .fcm ? (app.fcm?.applicationID ?? "") : app.topic
        let paths = [app.serverIdentityPath] + app.previousIdentityPaths.reversed()
        for path in paths {
            let opener = try opener(app: app, platform: platform, path: path, topic: topic, current: paths)
            if opener.serverKeyID == recipientKeyID { return opener }
        }
        return nil
    }

    /// The kept opener of one identity, or a new one; making one drops the app's openers of identities (or a topic)
    /// it no longer has, so a lookup that finds its opener costs no more than that.
    private func opener(
        app: GatewayApp, platform: PushPlatform, path: String, topic: String, current paths: [String]
    ) throws -> ReceiptOpener {
        let key = Key(appID: app.id, platform: platform, identityPath: path, topic: topic)
        if let opener = openers[key] { return opener }
        do {
            let opener = try ReceiptOpener(identity: try ServerIdentity(contentsOfFile: path), topic: topic)
            openers = openers.filter {
                $0.key.appID != app.id || $0.key.platform != platform
                    || ($0.key.topic == topic && paths.contains($0.key.identityPath))
            }
            openers[key] = opener
            return opener
        } catch let error as SealedPushError {
            throw GatewayAPIError(
                .serviceUnavailable, "unavailable",
                "app \(app.id): a server identity or its topic is not usable (\(error.code)); the operator must fix "
                    + "the app's configuration (`sealed-push-gateway identity list`)")
        }
    }
}
