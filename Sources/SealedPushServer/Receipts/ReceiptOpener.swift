import SealedPushCore

/// Opens receipts that devices seal to this server identity (`Specs/control-v1.md` §4), with libsodium.
///
/// A receipt is an envelope in the envelope spec's §3 format with the roles swapped (the server identity is the
/// recipient, a device key the authenticated sender) under its own HPKE `info`, so no envelope can pass for a
/// receipt. Checks run cheapest first: length, header, key ids, times, then the cryptography, then the record.
/// Remembering which receipts were opened (each opens once, until its `expiresAt`) is the caller's: ``OpenedReceipt``
/// carries the receipt's own id and expiry for that.
///
/// The static-static value `DH(skR, pkS)` of each device key is kept in a bounded cache (as ``Sealer`` keeps the
/// same value seen from the sealing side), so a receipt from a device heard from before costs one scalar
/// multiplication instead of two; the values wipe themselves when evicted. Copies of an opener share the cache.
public struct ReceiptOpener: Sendable {
    /// The default number of device keys whose static DH value is kept.
    public static let defaultCacheCapacity = 10_000

    private let identity: ServerIdentity
    private let schedule: HPKEKeySchedule
    private let cache: StaticSecretCache

    /// The key id of the server identity receipts must be sealed to.
    public var serverKeyID: KeyID { identity.keyID }

    /// Creates an opener for one app.
    ///
    /// - Parameters:
    ///   - identity: The server identity the app pins.
    ///   - topic: The app's topic (bundle id or application id).
    ///   - cacheCapacity: How many device keys' static DH values to keep (0: none).
    /// - Throws: `SealedPushError` with `invalidTopic`, or `invalidArgument` for a negative capacity.
    public init(identity: ServerIdentity, topic: String, cacheCapacity: Int = ReceiptOpener.defaultCacheCapacity) throws {
        guard cacheCapacity >= 0 else {
            throw SealedPushError(.invalidArgument, "cacheCapacity must be 0 or more, got \(cacheCapacity)")
        }
        self.identity = identity
        self.schedule = HPKEKeySchedule(mode: .auth, info: try DeliveryReceipt.hpkeInfo(topic: topic))
        self.cache = StaticSecretCache(capacity: cacheCapacity)
    }

    /// How many device keys' static DH values are kept now.
    package var cachedDeviceCount: Int { cache.count }

    /// Opens one receipt.
    ///
    /// - Parameters:
    ///   - bytes: The receipt envelope.
    ///   - devicePublicKey: Looks up a registered device key of this app by key id (nil when none is registered); a
    ///     key whose own id differs is treated as none.
    ///   - now: The server's clock, UNIX seconds.
    /// - Returns: The record, and who sent it.
    /// - Throws: `SealedPushError`: `malformedEnvelope` (wrong length or header), `unknownRecipientKey` (sealed to
    ///   another server identity), `unknownSenderKey` (no such registered device key), `expired`, `notYetValid`,
    ///   `authenticationFailure` (forged, or sealed for another app), `malformedContent` (the record).
    public func open(
        _ bytes: [UInt8], devicePublicKey: (KeyID) -> [UInt8]?, now: UInt64
    ) throws -> OpenedReceipt {
        guard bytes.count == DeliveryReceipt.maximumEnvelopeLength else {
            throw SealedPushError(
                .malformedEnvelope,
                "a receipt is exactly \(DeliveryReceipt.maximumEnvelopeLength) bytes, got \(bytes.count)")
        }
        let header = try EnvelopeHeader(parsing: bytes[0..<EnvelopeV1.headerLength])
        guard header.expiresAt - header.issuedAt <= DeliveryReceipt.maxLifetime else {
            throw SealedPushError(
                .malformedEnvelope,
                "a receipt lives at most \(DeliveryReceipt.maxLifetime) s, this one \(header.expiresAt - header.issuedAt) s")
        }
        guard header.recipientKeyID == identity.keyID else {
            throw SealedPushError(
                .unknownRecipientKey,
                "the receipt is sealed to server key \(header.recipientKeyID.hex), not \(identity.keyID.hex)")
        }
        guard let deviceKey = devicePublicKey(header.senderKeyID),
              (try? KeyID(derivingFrom: deviceKey)) == header.senderKeyID
        else {
            throw SealedPushError(
                .unknownSenderKey, "no registered device key \(header.senderKeyID.hex) for this app")
        }
        guard now < header.expiresAt else {
            throw SealedPushError(.expired, "the receipt expired at \(header.expiresAt) (UNIX seconds); now is \(now)")
        }
        try EnvelopeV1.checkNotBefore(issuedAt: header.issuedAt, now: now)
        let plaintext: SecretBytes?
        do {
            let staticValue = try cache.value(for: deviceKey) {
                try X25519.sharedSecret(privateKey: identity.privateKey, publicKey: deviceKey)
            }
            plaintext = try HPKERecipient.openAuth(
                Array(bytes[EnvelopeV1.headerLength...]), aad: Array(bytes[0..<EnvelopeV1.headerLength]),
                enc: header.enc, recipientPrivateKey: identity.privateKey, senderPublicKey: deviceKey,
                schedule: schedule, recipientPublicKey: identity.publicKey, staticSharedValue: staticValue)
        } catch {
            plaintext = nil  // a low-order key: the same answer as a forgery
        }
        guard let plaintext else {
            throw SealedPushError(.authenticationFailure, "the receipt did not authenticate")
        }
        let receipt = try DeliveryReceipt(paddedPlaintext: plaintext.bytes)
        return OpenedReceipt(
            receipt: receipt, receiptID: header.messageID, deviceKeyID: header.senderKeyID, issuedAt: header.issuedAt,
            expiresAt: header.expiresAt)
    }
}

/// A receipt that opened: the device's record, the receipt's own id and expiry (to remember it until then, so it
/// opens once), and the device key that sealed it (to check the notification was sent to that very key).
public struct OpenedReceipt: Sendable, Hashable {
    /// What the device reported.
    public let receipt: DeliveryReceipt
    /// The receipt's own id (its envelope header's `messageId`).
    public let receiptID: [UInt8]
    /// The device key that sealed it.
    public let deviceKeyID: KeyID
    /// The device time it was sealed at.
    public let issuedAt: UInt64
    /// Until when it could be presented again: remember ``receiptID`` until then.
    public let expiresAt: UInt64
}
