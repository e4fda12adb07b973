import SealedPushCore

/// Where a device is reached: its push platform and the token that platform gave it.
///
/// The stores keep it as three columns: `platform` (`apns` or `fcm`), `push_token` and `environment` (`production`
/// or `sandbox` for APNs; `production` for FCM, which has one), so the one-device-per-token rule covers both.
public struct PushAddress: Sendable, Hashable, CustomStringConvertible {
    /// The platform.
    public let platform: PushPlatform
    /// The token, whichever the platform: an APNs device token (lowercase hex) or an FCM registration token.
    public let token: String
    /// The APNs environment (nil for FCM).
    public let apnsEnvironment: APNsEnvironment?

    private init(platform: PushPlatform, token: String, apnsEnvironment: APNsEnvironment?) {
        self.platform = platform
        self.token = token
        self.apnsEnvironment = apnsEnvironment
    }

    /// An APNs device token (lowercase hex) and its environment.
    public static func apns(token: String, environment: APNsEnvironment) -> PushAddress {
        PushAddress(platform: .apns, token: token, apnsEnvironment: environment)
    }

    /// An FCM registration token.
    public static func fcm(token: String) -> PushAddress {
        PushAddress(platform: .fcm, token: token, apnsEnvironment: nil)
    }

    /// The `environment` column's value (`production` for FCM).
    var environmentColumn: String { (apnsEnvironment ?? .production).rawValue }

    /// Reads an address back from the store's columns (an unknown environment reads as production, as before).
    init(token: String, platform: String, environment: String) {
        if platform == PushPlatform.fcm.rawValue {
            self = .fcm(token: token)
        } else {
            self = .apns(token: token, environment: APNsEnvironment(rawValue: environment) ?? .production)
        }
    }

    /// The platform and a redacted token (its first 8 characters), for logs.
    public var description: String {
        if let apnsEnvironment { return "apns/\(apnsEnvironment.rawValue) \(token.prefix(8))…" }
        return "fcm \(token.prefix(8))…"
    }
}

extension DeviceRegistration {
    /// The record as kept for a device at `address`: an FCM device's record says `platform: fcm` with its token
    /// (`Specs/keyring-v1.md` §4), an APNs device's says neither.
    func on(_ address: PushAddress) -> DeviceRegistration {
        DeviceRegistration(
            publicKey: publicKey, keyId: keyId, createdAt: createdAt, expiresAt: expiresAt, platform: address.platform,
            fcmToken: address.platform == .fcm ? address.token : nil)
    }

    /// The record with its key id in lowercase, the text form the stores keep: a receipt finds its device by the
    /// key id as exact text, and an enqueue compares a job's with it.
    var lowercasingKeyID: DeviceRegistration {
        var record = self
        record.keyId = keyId.lowercased()
        return record
    }
}
