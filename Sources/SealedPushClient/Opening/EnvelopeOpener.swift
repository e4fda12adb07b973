import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// Opens SealedPush envelopes on the device (spec §8, steps 1–12) with swift-crypto's HPKE in mode_auth.
///
/// An opener holds the device private keys (looked up by the envelope's `recipientKeyId`), the pinned server
/// identity public keys (looked up by `senderKeyId`) and the APNs topic. It is immutable and `Sendable`; "now" is
/// passed to every call so the clock stays injectable. Replay detection (step 13) is not done here: see
/// ``ReplayGuard`` and ``SealedPushReceiver``.
///
/// Every cryptographic failure in step 11 is reported as the same `authenticationFailure`. Nothing is logged.
public struct EnvelopeOpener: Sendable {
    private let deviceKeys: [KeyID: Curve25519.KeyAgreement.PrivateKey]
    private let serverKeys: [KeyID: Curve25519.KeyAgreement.PublicKey]
    private let info: [UInt8]

    /// The APNs topic envelopes must have been sealed for.
    public let topic: String

    /// The ids of the device keys this opener holds.
    public var deviceKeyIDs: Set<KeyID> { Set(deviceKeys.keys) }

    /// The ids of the pinned server identity keys.
    public var serverKeyIDs: Set<KeyID> { Set(serverKeys.keys) }

    /// Creates an opener from raw keys.
    ///
    /// - Parameters:
    ///   - devicePrivateKeys: Raw 32-byte X25519 device private keys (current and retired ones). The opener copies
    ///     them into swift-crypto keys; the caller should overwrite its own buffers afterwards.
    ///   - serverPublicKeys: Raw 32-byte X25519 public keys of the pinned server identities.
    ///   - topic: The APNs topic (the app's bundle id), 1–255 bytes of UTF-8 without NUL.
    /// - Throws: `SealedPushError` with code `invalidKey` for a key of the wrong length or an empty key set,
    ///   `invalidTopic` for an unusable topic.
    public init(devicePrivateKeys: [[UInt8]], serverPublicKeys: [[UInt8]], topic: String) throws {
        var devices: [KeyID: Curve25519.KeyAgreement.PrivateKey] = [:]
        for raw in devicePrivateKeys {
            guard raw.count == 32 else {
                throw SealedPushError(.invalidKey, "a device private key is 32 bytes, got \(raw.count)")
            }
            let key: Curve25519.KeyAgreement.PrivateKey
            do {
                key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw)
            } catch {
                throw SealedPushError(.invalidKey, "a device private key could not be loaded")
            }
            devices[try KeyID.derived(fromPublicKey: Array(key.publicKey.rawRepresentation))] = key
        }
        try self.init(deviceKeys: devices, serverPublicKeys: serverPublicKeys, topic: topic)
    }

    /// Creates an opener holding every key of a device key ring (current and retired).
    ///
    /// - Parameters:
    ///   - keyRing: The device key ring.
    ///   - serverPublicKeys: Raw 32-byte X25519 public keys of the pinned server identities.
    ///   - topic: The APNs topic (the app's bundle id).
    /// - Throws: `SealedPushError` with code `invalidKey` or `invalidTopic`.
    public init(keyRing: DeviceKeyRing, serverPublicKeys: [[UInt8]], topic: String) throws {
        var devices: [KeyID: Curve25519.KeyAgreement.PrivateKey] = [:]
        for key in keyRing.keys {
            devices[key.keyID] = key.privateKey
        }
        try self.init(deviceKeys: devices, serverPublicKeys: serverPublicKeys, topic: topic)
    }

    private init(
        deviceKeys: [KeyID: Curve25519.KeyAgreement.PrivateKey],
        serverPublicKeys: [[UInt8]],
        topic: String
    ) throws {
        guard !deviceKeys.isEmpty else {
            throw SealedPushError(.invalidKey, "no device private key given")
        }
        var servers: [KeyID: Curve25519.KeyAgreement.PublicKey] = [:]
        for raw in serverPublicKeys {
            guard raw.count == 32 else {
                throw SealedPushError(.invalidKey, "a server public key is 32 bytes, got \(raw.count)")
            }
            try KeyText.checkCanonicalPublicKey(raw)
            let key: Curve25519.KeyAgreement.PublicKey
            do {
                key = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw)
            } catch {
                throw SealedPushError(.invalidKey, "a server public key could not be loaded")
            }
            servers[try KeyID.derived(fromPublicKey: raw)] = key
        }
        guard !servers.isEmpty else {
            throw SealedPushError(.invalidKey, "no pinned server public key given")
        }
        self.info = try EnvelopeV1.hpkeInfo(topic: topic)
        self.deviceKeys = deviceKeys
        self.serverKeys = servers
        self.topic = topic
    }

    /// Opens an APNs JSON body (spec §8 steps 1–12).
    ///
    /// - Parameters:
    ///   - body: The raw APNs JSON body.
    ///   - now: The current time, UNIX seconds.
    /// - Returns: The content and authenticated header fields.
    /// - Throws: `SealedPushError` with the code of the first failing step: `payloadTooLarge`, `malformedPayload`,
    ///   `badEncoding`, `truncated`, `malformedEnvelope`, `unsupportedVersion`, `unsupportedSuite`,
    ///   `unknownRecipientKey`, `unknownSenderKey`, `expired`, `notYetValid`, `authenticationFailure`,
    ///   `malformedContent`.
    public func open(body: [UInt8], now: UInt64) throws -> OpenedNotification {
        let envelope = try APNsPayload.extractEnvelope(fromBody: body)
        return try open(envelope: envelope, now: now)
    }

    /// Opens the envelope carried in a notification's `userInfo` dictionary (spec §8 steps 2–12).
    ///
    /// - Parameters:
    ///   - userInfo: The notification's `userInfo` (the APNs JSON as a dictionary).
    ///   - now: The current time, UNIX seconds.
    /// - Returns: The content and authenticated header fields.
    /// - Throws: `SealedPushError` as ``open(body:now:)``, except `payloadTooLarge`.
    public func open(userInfo: [AnyHashable: Any], now: UInt64) throws -> OpenedNotification {
        let envelope = try APNsPayload.extractEnvelope(fromUserInfo: userInfo)
        return try open(envelope: envelope, now: now)
    }

    /// Opens binary envelope bytes (spec §8 steps 4–12).
    ///
    /// - Parameters:
    ///   - envelope: The envelope (header and ciphertext), already base64url-decoded.
    ///   - now: The current time, UNIX seconds.
    /// - Returns: The content and authenticated header fields.
    /// - Throws: `SealedPushError` with the code of the first failing step from 4 on.
    public func open(envelope: [UInt8], now: UInt64) throws -> OpenedNotification {
        // Steps 4-7: length, version, suite, times.
        let parsed = try Envelope(parsing: envelope)
        let header = parsed.header
        // Step 8: device key lookup (an unauthenticated field, used only to select a key).
        guard let deviceKey = deviceKeys[header.recipientKeyID] else {
            throw SealedPushError(
                .unknownRecipientKey,
                "no device key with id \(header.recipientKeyID.hex) is held (held: \(Self.list(deviceKeys.keys)))"
            )
        }
        // Step 9: pinned server key lookup.
        guard let serverKey = serverKeys[header.senderKeyID] else {
            throw SealedPushError(
                .unknownSenderKey,
                "no pinned server key with id \(header.senderKeyID.hex) (pinned: \(Self.list(serverKeys.keys)))"
            )
        }
        // Step 10: expiry, checked before any crypto work.
        guard now < header.expiresAt else {
            throw SealedPushError(
                .expired,
                "the envelope expired at \(header.expiresAt) (UNIX seconds); now is \(now)"
            )
        }
        // Step 10a: not-before, with the spec's clock skew. An authentic envelope from the far future would
        // otherwise open today and occupy the replay state until then.
        try EnvelopeV1.checkNotBefore(issuedAt: header.issuedAt, now: now)
        // Step 11: SetupAuthR + Open(aad = header). One error for every cryptographic failure.
        var padded: [UInt8]
        do {
            var context = try HPKERecipientWrapper(
                privateKey: deviceKey,
                info: info,
                encapsulatedKey: header.enc,
                sender: serverKey
            )
            padded = try context.open(parsed.ciphertext, authenticating: header.encoded())
        } catch {
            throw SealedPushError(
                .authenticationFailure,
                "the envelope did not authenticate for topic \(topic) with device key \(header.recipientKeyID.hex) "
                    + "and server key \(header.senderKeyID.hex)"
            )
        }
        defer { Self.wipe(&padded) }
        // Step 12: padding and content.
        var content = try Padding.unpad(padded)
        defer { Self.wipe(&content) }
        let notification = try NotificationContent(json: content)
        return OpenedNotification(
            content: notification,
            messageID: header.messageID,
            issuedAt: header.issuedAt,
            expiresAt: header.expiresAt,
            recipientKeyID: header.recipientKeyID,
            senderKeyID: header.senderKeyID
        )
    }

    private static func list(_ ids: Dictionary<KeyID, some Any>.Keys) -> String {
        ids.map(\.hex).sorted().joined(separator: ", ")
    }

    static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices {
            bytes[index] = 0
        }
    }
}
