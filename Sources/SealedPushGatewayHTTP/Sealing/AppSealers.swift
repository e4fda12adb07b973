import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// One `Sealer` per app, made on first use from the app's 0600 server identity file and kept (its static-DH cache
/// then serves every later send to the same devices).
///
/// A sealer with a request's own placeholder is made per request (it shares the identity, not the cache entry).
actor AppSealers {
    private struct Entry {
        var identityPath: String
        var topic: String
        var sealer: Sealer
    }

    private var entries: [String: Entry] = [:]

    /// The app's sealer with `placeholder` (nil: the default placeholder).
    /// - Throws: ``GatewayAPIError`` `unavailable` (503) when the identity file cannot be read; the message names
    ///   the app, never the key.
    func sealer(for app: GatewayApp, placeholder: Placeholder?) throws -> Sealer {
        let base: Sealer
        if let entry = entries[app.id], entry.identityPath == app.serverIdentityPath, entry.topic == app.topic {
            base = entry.sealer
        } else {
            do {
                let identity = try ServerIdentity(contentsOfFile: app.serverIdentityPath)
                base = try Sealer(identity: identity, topic: app.topic)
            } catch let error as SealedPushError {
                throw GatewayAPIError(
                    .serviceUnavailable, "unavailable",
                    "app \(app.id): its server identity or topic is not usable (\(error.code)); the operator must fix "
                        + "the app's configuration")
            }
            entries[app.id] = Entry(identityPath: app.serverIdentityPath, topic: app.topic, sealer: base)
        }
        guard let placeholder, placeholder != base.placeholder else { return base }
        do {
            return try Sealer(identity: base.identity, topic: base.topic, placeholder: placeholder, cacheCapacity: 0)
        } catch let error as SealedPushError {
            throw GatewayAPIError.invalid("placeholder cannot be used: \(error.message)", field: "placeholder")
        }
    }
}
