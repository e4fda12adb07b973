#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SealedPushCore

/// Seals notification content for one device into an APNs JSON body (spec §9): HPKE mode_auth with the server
/// identity as sender, the device key as recipient and the envelope header as associated data.
///
/// A `Sealer` is configured once with the server identity, the APNs topic and the placeholder, and is safe to
/// share between threads. It caches the static-static value `DH(skS, pkR)` per device key in a bounded LRU
/// cache, so a repeat seal to a known device costs one key generation and one X25519 operation; the topic's key
/// schedule constants are computed once at initialization.
public final class Sealer: Sendable {
    /// The default number of device keys whose static DH value is cached.
    public static let defaultCacheCapacity = 10_000

    /// The server identity that authenticates every envelope.
    public let identity: ServerIdentity
    /// The APNs topic (bundle id) bound into the HPKE `info`.
    public let topic: String
    /// The placeholder alert shown by APNs and by the device when opening fails.
    public let placeholder: Placeholder

    private let schedule: HPKEKeySchedule
    private let cache: StaticSecretCache
    /// The body up to and including `"sp":"`: fixed by the placeholder, so computed once.
    private let payloadPrefix: [UInt8]

    /// Creates a sealer.
    ///
    /// - Parameters:
    ///   - identity: The server identity (sender key).
    ///   - topic: The APNs topic: 1 to 255 bytes of UTF-8 without NUL.
    ///   - placeholder: The placeholder alert; it must not depend on the content.
    ///   - cacheCapacity: How many device keys' static DH values to cache (0 disables the cache).
    /// - Throws: `SealedPushError` with code `invalidTopic` for a bad topic, `invalidArgument` for a negative
    ///   capacity.
    public init(
        identity: ServerIdentity, topic: String, placeholder: Placeholder = .default,
        cacheCapacity: Int = Sealer.defaultCacheCapacity
    ) throws {
        guard cacheCapacity >= 0 else {
            throw SealedPushError(.invalidArgument, "cacheCapacity must be 0 or more, got \(cacheCapacity)")
        }
        let info = try EnvelopeV1.hpkeInfo(topic: topic)
        self.identity = identity
        self.topic = topic
        self.placeholder = placeholder
        self.schedule = HPKEKeySchedule(mode: .auth, info: info)
        self.cache = StaticSecretCache(capacity: cacheCapacity)
        self.payloadPrefix = APNsPayload.prefix(placeholder: placeholder)
    }

    /// The current time in UNIX seconds (the default `now` of ``seal(_:to:ttl:now:)``).
    ///
    /// - Returns: Seconds since 1970-01-01T00:00:00Z, or 0 if the clock is before that.
    public static func currentTime() -> UInt64 {
        let seconds = time(nil)
        return seconds > 0 ? UInt64(seconds) : 0
    }

    /// Seals `content` for `device` and builds the APNs JSON body.
    ///
    /// - Parameters:
    ///   - content: The notification content.
    ///   - device: The device's public key.
    ///   - ttl: Seconds until the envelope expires, 1 ... 2,419,200 (28 days).
    ///   - now: The issue time in UNIX seconds.
    /// - Returns: The body, the envelope and its message id and times.
    /// - Throws: `SealedPushError`: `malformedContent` (content that cannot be encoded), `contentTooLarge`
    ///   (over 2,910 bytes of canonical JSON), `payloadTooLarge` (the body would exceed 4,096 bytes with this
    ///   placeholder; the message states the bytes needed and the limit), `invalidArgument` (ttl out of range),
    ///   `invalidKey` (a low-order device key).
    public func seal(
        _ content: NotificationContent, to device: DevicePublicKey, ttl: UInt64 = EnvelopeV1.defaultTTL,
        now: UInt64 = Sealer.currentTime()
    ) throws -> SealedNotification {
        _ = try Self.expiry(now: now, ttl: ttl)  // a bad ttl is reported before anything about the content
        return try seal(try prepare(content), to: device, ttl: ttl, now: now)
    }

    /// Encodes, pads and checks `content` against this sealer's budget once, for sealing it to many devices.
    ///
    /// - Parameter content: The notification content.
    /// - Returns: The prepared content, for ``seal(_:to:ttl:now:)-(PreparedContent,_,_,_)``.
    /// - Throws: `SealedPushError`: `malformedContent`, `contentTooLarge`, `payloadTooLarge` as
    ///   ``seal(_:to:ttl:now:)-(NotificationContent,_,_,_)``.
    public func prepare(_ content: NotificationContent) throws -> PreparedContent {
        PreparedContent(padded: try paddedContent(content))
    }

    /// Seals prepared content for `device` and builds the APNs JSON body: a fan-out's per-device step (a fresh
    /// ephemeral key and message id each time).
    ///
    /// - Parameters:
    ///   - content: Content from ``prepare(_:)``.
    ///   - device: The device's public key.
    ///   - ttl: Seconds until the envelope expires, 1 ... 2,419,200 (28 days).
    ///   - now: The issue time in UNIX seconds.
    /// - Returns: The body, the envelope and its message id and times.
    /// - Throws: `SealedPushError`: `payloadTooLarge` (content prepared by a sealer with a shorter placeholder),
    ///   `invalidArgument` (ttl out of range), `invalidKey` (a low-order device key).
    public func seal(
        _ content: PreparedContent, to device: DevicePublicKey, ttl: UInt64 = EnvelopeV1.defaultTTL,
        now: UInt64 = Sealer.currentTime()
    ) throws -> SealedNotification {
        let expiresAt = try Self.expiry(now: now, ttl: ttl)
        let paddedPlaintext = content.padded
        try APNsPayload.checkBudget(
            APNsPayload.bodyLength(prefixLength: payloadPrefix.count, paddedPlaintextLength: paddedPlaintext.count))
        let ephemeralKey: SecretBytes
        do {
            ephemeralKey = try X25519.generatePrivateKey()
        } catch let error as HPKEError {
            throw SealedPushError(hpke: error, context: "generating the ephemeral key")
        }
        return try seal(
            paddedPlaintext: paddedPlaintext, to: device, ephemeralPrivateKey: ephemeralKey,
            messageID: MessageID.draw(), issuedAt: now, expiresAt: expiresAt)
    }

    /// `now + ttl`, after checking the ttl's range and the sum.
    private static func expiry(now: UInt64, ttl: UInt64) throws -> UInt64 {
        guard ttl >= 1, ttl <= EnvelopeV1.maxLifetime else {
            throw SealedPushError(
                .invalidArgument, "ttl must be 1 ... \(EnvelopeV1.maxLifetime) seconds (28 days), got \(ttl)")
        }
        let (expiresAt, overflow) = now.addingReportingOverflow(ttl)
        guard !overflow else {
            throw SealedPushError(.invalidArgument, "now (\(now)) + ttl (\(ttl)) overflows a 64-bit timestamp")
        }
        return expiresAt
    }

    /// Deterministic sealing for test vectors and tests: the ephemeral key, message id and times are given.
    /// Real senders use ``seal(_:to:ttl:now:)``, which draws them from a secure random source.
    ///
    /// - Parameters:
    ///   - content: The notification content.
    ///   - device: The device's public key.
    ///   - ephemeralPrivateKey: `skE`, 32 bytes.
    ///   - messageID: 16 bytes.
    ///   - issuedAt: UNIX seconds.
    ///   - expiresAt: UNIX seconds, `issuedAt ... issuedAt + 2,419,200`.
    /// - Returns: The sealed notification.
    /// - Throws: `SealedPushError` as ``seal(_:to:ttl:now:)``, and `invalidArgument` for a bad message id or times,
    ///   `invalidKey` for an ephemeral key that is not 32 bytes.
    package func seal(
        _ content: NotificationContent, to device: DevicePublicKey, ephemeralPrivateKey: [UInt8],
        messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64
    ) throws -> SealedNotification {
        guard ephemeralPrivateKey.count == X25519.keyLength else {
            throw SealedPushError(
                .invalidKey, "an ephemeral private key is \(X25519.keyLength) bytes, got \(ephemeralPrivateKey.count)")
        }
        var paddedPlaintext = try paddedContent(content)
        defer { Sodium.wipe(&paddedPlaintext) }
        return try seal(
            paddedPlaintext: paddedPlaintext, to: device,
            ephemeralPrivateKey: SecretBytes(copying: ephemeralPrivateKey), messageID: messageID, issuedAt: issuedAt,
            expiresAt: expiresAt)
    }

    /// Deterministic sealing of an arbitrary plaintext, for negative test vectors (bad padding, malformed content)
    /// that a receiver must reject only after opening: no content encoding and no padding is applied, only the
    /// 4,096-byte body check.
    ///
    /// - Parameters:
    ///   - plaintext: The bytes to seal as the padded plaintext.
    ///   - device: The device's public key.
    ///   - ephemeralPrivateKey: `skE`, 32 bytes.
    ///   - messageID: 16 bytes.
    ///   - issuedAt: UNIX seconds.
    ///   - expiresAt: UNIX seconds, `issuedAt ... issuedAt + 2,419,200`.
    /// - Returns: The sealed notification.
    /// - Throws: `SealedPushError` with `payloadTooLarge`, `invalidArgument` or `invalidKey`.
    package func seal(
        rawPlaintext plaintext: [UInt8], to device: DevicePublicKey, ephemeralPrivateKey: [UInt8],
        messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64
    ) throws -> SealedNotification {
        guard ephemeralPrivateKey.count == X25519.keyLength else {
            throw SealedPushError(
                .invalidKey, "an ephemeral private key is \(X25519.keyLength) bytes, got \(ephemeralPrivateKey.count)")
        }
        let bodyLength = APNsPayload.bodyLength(prefixLength: payloadPrefix.count, paddedPlaintextLength: plaintext.count)
        try APNsPayload.checkBudget(bodyLength)
        return try seal(
            paddedPlaintext: plaintext, to: device, ephemeralPrivateKey: SecretBytes(copying: ephemeralPrivateKey),
            messageID: messageID, issuedAt: issuedAt, expiresAt: expiresAt)
    }

    /// The number of device keys whose static DH value is cached now.
    package var cachedDeviceCount: Int { cache.count }

    /// The cache capacity.
    package var cacheCapacity: Int { cache.capacity }

    // MARK: Steps of spec §9

    /// Step 1–2: canonical JSON, padding, and the exact body length check, all before any cryptography.
    private func paddedContent(_ content: NotificationContent) throws -> [UInt8] {
        var json = try content.canonicalJSON()
        defer { Sodium.wipe(&json) }
        var padded = try Padding.pad(json)
        let bodyLength = APNsPayload.bodyLength(prefixLength: payloadPrefix.count, paddedPlaintextLength: padded.count)
        guard bodyLength <= APNsPayload.maxBodyBytes else {
            let paddedLength = padded.count
            Sodium.wipe(&padded)
            throw SealedPushError(
                .payloadTooLarge,
                "the APNs body would be \(bodyLength) bytes (content \(json.count) bytes padded to \(paddedLength)) "
                    + "but the limit is \(APNsPayload.maxBodyBytes) bytes; shorten the content or the placeholder")
        }
        return padded
    }

    /// Steps 3–5: header, SetupAuthS with the cached static DH, Seal(aad = header), body.
    private func seal(
        paddedPlaintext: [UInt8], to device: DevicePublicKey, ephemeralPrivateKey: SecretBytes,
        messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64
    ) throws -> SealedNotification {
        guard messageID.count == EnvelopeV1.messageIDLength else {
            throw SealedPushError(
                .invalidArgument, "a message id is \(EnvelopeV1.messageIDLength) bytes, got \(messageID.count)")
        }
        guard issuedAt <= expiresAt, expiresAt - issuedAt <= EnvelopeV1.maxLifetime else {
            throw SealedPushError(
                .invalidArgument,
                "expiresAt (\(expiresAt)) must be issuedAt (\(issuedAt)) ... issuedAt + \(EnvelopeV1.maxLifetime)")
        }
        let context = "sealing for device key \(device.keyID.hex)"
        let encapsulation: DHKEMX25519.Encapsulation
        var hpke: HPKESenderContext
        do {
            let staticValue = try cache.value(for: device.rawRepresentation) {
                try X25519.sharedSecret(privateKey: identity.privateKey, publicKey: device.rawRepresentation)
            }
            encapsulation = try DHKEMX25519.authEncap(
                recipientPublicKey: device.rawRepresentation, senderPublicKey: identity.publicKey,
                staticSharedValue: staticValue, ephemeralPrivateKey: ephemeralPrivateKey)
            hpke = try schedule.senderContext(sharedSecret: encapsulation.sharedSecret)
        } catch let error as HPKEError {
            throw SealedPushError(hpke: error, context: context)
        }

        let header = EnvelopeHeader(
            version: EnvelopeV1.version, suite: EnvelopeV1.suiteID, recipientKeyID: device.keyID,
            senderKeyID: identity.keyID, messageID: messageID, issuedAt: issuedAt, expiresAt: expiresAt,
            enc: encapsulation.enc)
        let aad = header.encoded()
        var envelope = aad
        envelope.append(contentsOf: repeatElement(0, count: paddedPlaintext.count + EnvelopeV1.tagLength))
        do {
            try envelope.withUnsafeMutableBytes { out in
                try aad.withUnsafeBytes { aadView in
                    try paddedPlaintext.withUnsafeBytes { plaintextView in
                        try hpke.seal(
                            aad: aadView, plaintext: plaintextView,
                            into: UnsafeMutableRawBufferPointer(rebasing: out[aad.count...]))
                    }
                }
            }
        } catch let error as HPKEError {
            throw SealedPushError(hpke: error, context: context)
        }
        let payload = APNsPayload.encode(prefix: payloadPrefix, envelope: envelope)
        return SealedNotification(
            payload: payload, envelope: envelope, messageID: messageID, issuedAt: issuedAt, expiresAt: expiresAt,
            recipientKeyID: device.keyID, senderKeyID: identity.keyID)
    }
}
