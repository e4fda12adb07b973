import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// The body of `PUT /v1/apps/{appId}/devices/{deviceId}` (`DeviceRequest`), validated.
///
/// The registration is checked by the server's own rule (`DeviceRecord.register`, `Specs/keyring-v1.md` §4): the
/// key id recomputed from the public key, `createdAt` at most 600 s ahead of the gateway's clock, an expiry after
/// creation. Each failure names its field.
///
/// An iPhone sends `apnsToken` and `environment` (`platform` absent or `apns`); an Android device sends
/// `"platform": "fcm"` and its `fcmToken` (`Specs/fcm-v1.md` §7). Members of the other platform are refused.
struct DeviceRequest {
    /// Where the device is reached.
    var address: PushAddress
    /// The registration record as the device sent it.
    var registration: DeviceRegistration
    /// The backend's user of the device, if given (sends may name users).
    var userID: String?

    /// Parses and validates a body.
    /// - Parameters:
    ///   - body: The request body.
    ///   - now: The gateway's clock (for the clock-skew rule).
    /// - Throws: ``GatewayAPIError``: `malformedRequest` (400) for a shape error, `invalidArgument` or
    ///   `invalidKey` (422) naming the field.
    init(body: [UInt8], now: Date) throws {
        let fields = try JSONFields(body: body)
        try fields.rejectUnknown(["platform", "apnsToken", "environment", "fcmToken", "registration", "userId"])

        let platformText = try fields.string("platform") ?? PushPlatform.apns.rawValue
        guard let platform = PushPlatform(rawValue: platformText) else {
            throw GatewayAPIError.invalid("platform must be apns or fcm", field: "platform")
        }
        switch platform {
        case .apns:
            if try fields.string("fcmToken") != nil {
                throw GatewayAPIError.invalid("fcmToken belongs to an fcm device; an apns device sends apnsToken", field: "fcmToken")
            }
            let token = try Self.required(fields, "apnsToken", platform: platform)
            let tokenBytes = token.utf8
            guard (64...200).contains(tokenBytes.count), tokenBytes.count % 2 == 0,
                tokenBytes.allSatisfy(Self.isHexDigit)
            else {
                throw GatewayAPIError.invalid(
                    "apnsToken must be an even number (64 to 200) of hex digits", field: "apnsToken")
            }
            let environmentText = try Self.required(fields, "environment", platform: platform)
            guard let environment = APNsEnvironment(rawValue: environmentText) else {
                throw GatewayAPIError.invalid("environment must be production or sandbox", field: "environment")
            }
            address = .apns(token: token.lowercased(), environment: environment)
        case .fcm:
            for name in ["apnsToken", "environment"] where try fields.string(name) != nil {
                throw GatewayAPIError.invalid("\(name) belongs to an apns device; an fcm device sends fcmToken", field: name)
            }
            let token = try Self.required(fields, "fcmToken", platform: platform)
            guard FCMRegistrationToken.isWellFormed(token) else {
                throw GatewayAPIError.invalid(
                    "fcmToken must be \(FCMRegistrationToken.ruleDescription) (an FCM registration token)", field: "fcmToken")
            }
            address = .fcm(token: token)
        }

        registration = try Self.registration(
            fields.object("registration", required: true)!, address: address, now: now)

        userID = try fields.string("userId")
        if let userID, !Identifier.isValid(userID) {
            throw GatewayAPIError.invalid("userId must be 1 to 128 of A-Z a-z 0-9 . _ ~ -", field: "userId")
        }
    }

    /// A member the device's platform requires. Its absence is `422 invalidArgument` (which members are required
    /// depends on `platform`, a rule the contract's schema states in prose), not a malformed request.
    private static func required(_ fields: JSONFields, _ name: String, platform: PushPlatform) throws -> String {
        guard let value = try fields.string(name) else {
            let device = platform == .apns ? "an APNs" : "an FCM"
            throw GatewayAPIError.invalid("\(name) is required for \(device) device", field: name)
        }
        return value
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// A fixed scalar for ``canSealTo(_:)`` (clamped by X25519 to a multiple of the cofactor 8).
    private static let probeScalar = [UInt8](repeating: 0x5a, count: 32)

    /// A whole number with thousands separated by commas (`7,200`).
    private static func grouped(_ value: Int64) -> String {
        var digits = String(value.magnitude)
        var groups: [String] = []
        while digits.count > 3 {
            groups.insert(String(digits.suffix(3)), at: 0)
            digits.removeLast(3)
        }
        groups.insert(digits, at: 0)
        return (value < 0 ? "-" : "") + groups.joined(separator: ",")
    }

    /// Whether X25519 with `key` gives a non-zero shared value: false for the low-order points (of the curve or its
    /// twist), which every sealing to the key would refuse. A clamped scalar is a multiple of 8, so the product is
    /// zero exactly for those points, whatever the scalar.
    private static func canSealTo(_ key: DevicePublicKey) -> Bool {
        (try? X25519.sharedSecret(privateKey: probeScalar, publicKey: key.rawRepresentation)) != nil
    }

    /// The registration record, validated (`Specs/keyring-v1.md` §4). Its `platform` and `fcmToken`, when present,
    /// must agree with the request's.
    private static func registration(_ fields: JSONFields, address: PushAddress, now: Date) throws -> DeviceRegistration {
        try fields.rejectUnknown(["version", "publicKey", "keyId", "createdAt", "expiresAt", "platform", "fcmToken"])
        if let platform = try fields.string("platform"), platform != address.platform.rawValue {
            throw GatewayAPIError.invalid(
                "registration.platform is \(platform) but the device registers as \(address.platform.rawValue)",
                field: "registration.platform")
        }
        if let token = try fields.string("fcmToken"), token != (address.platform == .fcm ? address.token : nil) {
            throw GatewayAPIError.invalid(
                "registration.fcmToken must be the request's fcmToken (and only on an fcm device)",
                field: "registration.fcmToken")
        }
        let version = try fields.integer("version", required: true)!
        guard version == 1 else {
            throw GatewayAPIError.invalid(
                "registration.version \(version) is not supported (expected 1)", field: "registration.version")
        }
        let publicKey = try fields.string("publicKey", required: true)!
        let keyID = try fields.string("keyId", required: true)!
        let devicePublicKey: DevicePublicKey
        do {
            devicePublicKey = try DevicePublicKey(text: publicKey)
        } catch let error as SealedPushError {
            throw GatewayAPIError(
                .unprocessableContent, "invalidKey", "registration.publicKey is not a device public key: \(error.message)",
                field: "registration.publicKey")
        }
        // A key nothing can be sealed to (a low-order point: X25519 gives an all-zero shared value) is refused here,
        // not accepted to fail every later send to the device (`Specs/envelope-v1.md` §7).
        guard Self.canSealTo(devicePublicKey) else {
            throw GatewayAPIError(
                .unprocessableContent, "invalidKey",
                "registration.publicKey is a low-order X25519 point: nothing can be sealed to it (RFC 9180 §7.1.4); "
                    + "the device must generate a new key pair", field: "registration.publicKey")
        }
        // The text form is exact: 16 lowercase hex digits (`Specs/envelope-v1.md` §7). A receipt finds its device by
        // the key id as text, so another spelling of the same bytes is refused, never kept.
        // `KeyID(hex:)` reads either case; its own text form is the exact one.
        let parsedKeyID = try? KeyID(hex: keyID)
        guard let parsedKeyID, parsedKeyID.hex == keyID else {
            let detail =
                parsedKeyID != nil
                ? "it has upper-case letters; send it as the device's key ring states it"
                : "got \(keyID.utf8.count) characters"
            throw GatewayAPIError(
                .unprocessableContent, "invalidKey",
                "registration.keyId must be the key id of publicKey as 16 lowercase hex digits (0-9 a-f): \(detail)",
                field: "registration.keyId")
        }
        func date(_ name: String, required: Bool) throws -> Date? {
            guard let text = try fields.string(name, required: required) else { return nil }
            let field = "registration.\(name)"
            // `Specs/keyring-v1.md` §4 and the contract's Timestamp: UTC, whole seconds, exactly this form — the
            // one a parsed time formats back to (a fraction, an offset or another separator does not).
            guard let date = try? DeviceRegistration.parseDate(text, field: field),
                DeviceRegistration.formatDate(date) == text
            else {
                throw GatewayAPIError.invalid(
                    "\(field) must be a UTC time written YYYY-MM-DDTHH:MM:SSZ (whole seconds, no offset; "
                        + "Specs/keyring-v1.md §4), for example 2026-11-21T10:00:00Z", field: field)
            }
            guard date.timeIntervalSince1970 >= 0 else {
                throw GatewayAPIError.invalid(
                    "\(field) is before 1970-01-01T00:00:00Z: no device key is that old (the device clock is wrong)",
                    field: field)
            }
            return date
        }
        let createdAt = try date("createdAt", required: true)!
        let expiresAt = try date("expiresAt", required: false)
        // The server's rules below, stated here with their limits and in the fields' own form.
        let ahead = Int64(createdAt.timeIntervalSince1970) - Int64(now.timeIntervalSince1970.rounded(.down))
        if ahead > Int64(DeviceRecord.maxClockSkew) {
            throw GatewayAPIError.invalid(
                "registration.createdAt is \(Self.grouped(ahead)) s ahead of the gateway's clock (at most "
                    + "\(DeviceRecord.maxClockSkew)): the device clock is wrong", field: "registration.createdAt")
        }
        if let expiresAt, expiresAt <= createdAt {
            throw GatewayAPIError.invalid(
                "registration.expiresAt (\(DeviceRegistration.formatDate(expiresAt))) must be after registration.createdAt "
                    + "(\(DeviceRegistration.formatDate(createdAt)))\(expiresAt == createdAt ? ", not equal to it" : "")",
                field: "registration.expiresAt")
        }
        let registration = DeviceRegistration(
            publicKey: publicKey, keyId: keyID, createdAt: createdAt, expiresAt: expiresAt)

        // The server's rule, not a copy of it.
        var record = DeviceRecord()
        do {
            try record.register(registration, now: UInt64(max(0, now.timeIntervalSince1970.rounded(.down))))
        } catch let error as SealedPushError {
            switch error.code {
            case .invalidKey:
                throw GatewayAPIError(.unprocessableContent, "invalidKey", error.message, field: "registration.keyId")
            default:
                let field = expiresAt.map { $0 <= createdAt } == true ? "registration.expiresAt" : "registration.createdAt"
                throw GatewayAPIError.invalid(error.message, field: field)
            }
        }
        return registration
    }
}
