import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// One `Sealer` per app and platform, made on first use from the app's 0600 server identity file and kept (its
/// static-DH cache then serves every later send to the same devices). The topic an envelope is bound to is the
/// platform's: the APNs topic (bundle id) for iPhones, the Android application id for FCM devices.
///
/// A sealer with a request's own placeholder is made per request (it shares the identity, not the cache entry).
actor AppSealers {
    private struct Entry {
        var identityPath: String
        var topic: String
        var sealer: Sealer
    }

    private struct Key: Hashable {
        var appID: String
        var platform: PushPlatform
    }

    private var entries: [Key: Entry] = [:]

    /// The app's sealer for `platform` with `placeholder` (nil: the default placeholder; FCM messages carry none).
    /// - Throws: ``GatewayAPIError`` `unavailable` (503) when the identity file cannot be read; the message names
    ///   the app, never the key.
    func sealer(for app: GatewayApp, platform: PushPlatform = .apns, placeholder: Placeholder?) throws -> Sealer {
        let base: Sealer
        let topic = platform == .fcm ? (app.fcm?.applicationID ?? "") : app.topic
        let key = Key(appID: app.id, platform: platform)
        if let entry = entries[key], entry.identityPath == app.serverIdentityPath, entry.topic == topic {
            base = entry.sealer
        } else {
            do {
                let identity = try ServerIdentity(contentsOfFile: app.serverIdentityPath)
                base = try Sealer(identity: identity, topic: topic)
            } catch let error as SealedPushError {
                throw GatewayAPIError(
                    .serviceUnavailable, "unavailable",
                    "app \(app.id): its server identity or topic is not usable (\(error.code)); the operator must fix "
                        + "the app's configuration")
            }
            entries[key] = Entry(identityPath: app.serverIdentityPath, topic: topic, sealer: base)
        }
        guard let placeholder, placeholder != base.placeholder else { return base }
        do {
            return try Sealer(identity: base.identity, topic: base.topic, placeholder: placeholder, cacheCapacity: 0)
        } catch let error as SealedPushError {
            throw GatewayAPIError.invalid("placeholder cannot be used: \(error.message)", field: "placeholder")
        }
    }
}
