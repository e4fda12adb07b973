#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a device sends its backend so the backend can seal to it (see `Specs/keyring-v1.md`).
///
/// JSON: `{"version":1,"publicKey":"SPK1:…","keyId":"<16 hex>","createdAt":"<ISO 8601>","expiresAt":"<ISO 8601>"}`;
/// `expiresAt` is optional. The receiver of a registration recomputes the key id from the public key and rejects a
/// mismatch. An Android device adds `"platform":"fcm"` and its `"fcmToken"` (`Specs/fcm-v1.md` §7); a registration
/// without `platform` is an APNs one.
public struct DeviceRegistration: Sendable, Hashable, Codable {
    /// The format version, 1.
    public var version: Int
    /// The device public key in its text form (`SPK1:…`).
    public var publicKey: String
    /// The key id of ``publicKey`` (16 hex digits).
    public var keyId: String
    /// When the key was created.
    public var createdAt: Date
    /// When the device stops accepting envelopes for this key, if it has decided already.
    public var expiresAt: Date?
    /// The push platform the device is reached through (`apns` when the record does not say).
    public var platform: PushPlatform
    /// The FCM registration token, present exactly when ``platform`` is ``PushPlatform/fcm``.
    public var fcmToken: String?

    /// Creates a registration record.
    /// - Parameters:
    ///   - publicKey: The device public key's text form.
    ///   - keyId: The key id's text form.
    ///   - createdAt: The key's creation time.
    ///   - expiresAt: The key's retirement deadline, if known.
    ///   - platform: The push platform (default `apns`).
    ///   - fcmToken: The FCM registration token (for `fcm` only).
    public init(
        publicKey: String, keyId: String, createdAt: Date, expiresAt: Date? = nil, platform: PushPlatform = .apns,
        fcmToken: String? = nil
    ) {
        self.version = 1
        self.publicKey = publicKey
        self.keyId = keyId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.platform = platform
        self.fcmToken = fcmToken
    }

    private enum CodingKeys: String, CodingKey { case version, platform, fcmToken, publicKey, keyId, createdAt, expiresAt }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        guard version == 1 else {
            throw SealedPushError(.invalidArgument, "registration version \(version) is not supported (expected 1)")
        }
        publicKey = try container.decode(String.self, forKey: .publicKey)
        keyId = try container.decode(String.self, forKey: .keyId)
        createdAt = try Self.parseDate(container.decode(String.self, forKey: .createdAt), field: "createdAt")
        expiresAt = try container.decodeIfPresent(String.self, forKey: .expiresAt).map {
            try Self.parseDate($0, field: "expiresAt")
        }
        let platformName = try container.decodeIfPresent(String.self, forKey: .platform) ?? PushPlatform.apns.rawValue
        guard let platform = PushPlatform(rawValue: platformName) else {
            throw SealedPushError(
                .invalidArgument, "registration platform \"\(platformName.prefix(20))\" is not apns or fcm")
        }
        self.platform = platform
        fcmToken = try container.decodeIfPresent(String.self, forKey: .fcmToken)
        try validatePlatform()
    }

    /// Checks that ``fcmToken`` is present, and not empty, exactly for an `fcm` registration (`Specs/fcm-v1.md` §7).
    /// - Throws: ``SealedPushError`` with code `invalidArgument`.
    public func validatePlatform() throws {
        switch platform {
        case .fcm:
            guard let fcmToken, !fcmToken.isEmpty else {
                throw SealedPushError(.invalidArgument, "an fcm registration needs a non-empty fcmToken")
            }
        case .apns:
            guard fcmToken == nil else {
                throw SealedPushError(.invalidArgument, "an apns registration must not carry an fcmToken")
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        if platform != .apns {  // APNs records stay as they were before platforms existed
            try container.encode(platform.rawValue, forKey: .platform)
            try container.encodeIfPresent(fcmToken, forKey: .fcmToken)
        }
        try container.encode(publicKey, forKey: .publicKey)
        try container.encode(keyId, forKey: .keyId)
        try container.encode(Self.formatDate(createdAt), forKey: .createdAt)
        try container.encodeIfPresent(expiresAt.map(Self.formatDate), forKey: .expiresAt)
    }

    /// Formats a date as ISO 8601 in UTC with whole seconds, for example `2026-11-21T10:00:00Z`.
    /// - Parameter date: The date; one outside years 0000 ... 9999 is clamped to that range.
    /// - Returns: The text form.
    public static func formatDate(_ date: Date) -> String {
        ISO8601.format(unixSeconds: ISO8601.clampedSeconds(date.timeIntervalSince1970))
    }

    /// Parses an ISO 8601 date with or without fractional seconds.
    /// - Parameters:
    ///   - text: The text form.
    ///   - field: The field name, for the error message.
    /// - Returns: The date.
    /// - Throws: ``SealedPushError`` with code `invalidArgument`.
    public static func parseDate(_ text: String, field: String = "date") throws -> Date {
        guard let seconds = ISO8601.parse(text) else {
            throw SealedPushError(
                .invalidArgument, "\(field) \"\(text.prefix(40))\" is not an ISO 8601 date like 2026-11-21T10:00:00Z")
        }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
