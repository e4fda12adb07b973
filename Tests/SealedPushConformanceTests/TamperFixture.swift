import SealedPushClient
import SealedPushCore
import SealedPushServer
import Testing

/// Sealed envelopes for the tamper suite, and the expected outcome of a tampered envelope computed from
/// `Specs/envelope-v1.md` §8 alone (never from what the opener returns).
///
/// The server identity is RFC 7748 §6.1 Alice; the device key ring is generated; envelopes are sealed by the server's
/// libsodium `Sealer` with deterministic ephemeral keys and message ids, and opened by the client's swift-crypto
/// `EnvelopeOpener` — the two independent implementations meet only at the wire format.
struct TamperFixture: Sendable {
    static let topic = "com.example.tamper"
    static let issuedAt: UInt64 = 1_790_000_000
    static let ttl: UInt64 = 86_400
    /// One minute after issue: every untampered envelope opens.
    static let now: UInt64 = issuedAt + 60
    /// RFC 7748 §6.1 Alice's private key, the server identity.
    static let serverPrivateKey: [UInt8] = [
        0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d, 0x3c, 0x16, 0xc1, 0x72, 0x51, 0xb2, 0x66, 0x45,
        0xdf, 0x4c, 0x2f, 0x87, 0xeb, 0xc0, 0x99, 0x2a, 0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a,
    ]
    static let envelopeCount = 1_000

    static let shared = Result { try TamperFixture() }

    let identity: ServerIdentity
    let ring: DeviceKeyRing
    let device: DevicePublicKey
    let sealer: Sealer
    let opener: EnvelopeOpener
    let contents: [NotificationContent]
    let envelopes: [[UInt8]]

    init() throws {
        identity = try ServerIdentity(privateKey: Self.serverPrivateKey)
        ring = DeviceKeyRing.generate(now: Self.issuedAt - 3_600)
        device = try DevicePublicKey(rawRepresentation: ring.current.publicKey)
        sealer = try Sealer(identity: identity, topic: Self.topic)
        opener = try EnvelopeOpener(keyRing: ring, serverPublicKeys: [identity.publicKey], topic: Self.topic)
        var contents = [NotificationContent]()
        var envelopes = [[UInt8]]()
        for index in 0..<Self.envelopeCount {
            // Mostly the 128- and 256-byte buckets, every 50th one 512 bytes; varied members and unicode.
            let bodyLength = index % 50 == 0 ? 300 : 10 + index % 150
            let content = NotificationContent(
                title: "Message \(index) ✉️", body: String(repeating: "é", count: bodyLength / 2),
                badge: index % 3 == 0 ? index : nil, threadID: "thread-\(index % 7)")
            let sealed = try sealer.seal(
                content, to: device, ephemeralPrivateKey: Self.bytes(seed: index, salt: 0xE1, count: 32),
                messageID: Self.bytes(seed: index, salt: 0x1D, count: 16), issuedAt: Self.issuedAt,
                expiresAt: Self.issuedAt + Self.ttl)
            contents.append(content)
            envelopes.append(sealed.envelope)
        }
        self.contents = contents
        self.envelopes = envelopes
    }

    /// Deterministic bytes from a seed (a small LCG: reproducible, not secret).
    static func bytes(seed: Int, salt: UInt64, count: Int) -> [UInt8] {
        var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 &+ salt
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    /// Spec §8 steps 4–11 for an altered envelope: the first step that must fail, given the original's key ids.
    /// - Parameters:
    ///   - tampered: The altered envelope bytes.
    ///   - original: The envelope as sealed (its key ids are the ones the receiver holds and pins).
    /// - Returns: The error code the receiver must report (`authenticationFailure` when every earlier check passes).
    static func expectedCode(tampered: [UInt8], original: [UInt8]) -> SealedPushError.Code {
        if tampered.count < 82 + 16 + 128 { return .truncated }
        if tampered.count > 82 + 16 + 4096 { return .malformedEnvelope }
        if tampered[0] != 1 { return .unsupportedVersion }
        if tampered[1] != 1 { return .unsupportedSuite }
        let issuedAt = bigEndian(tampered[34..<42]), expiresAt = bigEndian(tampered[42..<50])
        if issuedAt > expiresAt || expiresAt - issuedAt > 2_419_200 { return .malformedEnvelope }
        if tampered[2..<10] != original[2..<10] { return .unknownRecipientKey }
        if tampered[10..<18] != original[10..<18] { return .unknownSenderKey }
        if !(now < expiresAt) { return .expired }
        if issuedAt > now + 600 { return .notYetValid }
        return .authenticationFailure
    }

    /// The extension step's fallback reason for an error code (issue 3's list; spec §8 codes not named there are
    /// "malformed").
    static func expectedReason(_ code: SealedPushError.Code) -> FallbackReason {
        switch code {
        case .unknownRecipientKey: .unknownKey
        case .unknownSenderKey: .unknownSender
        case .authenticationFailure: .authenticationFailure
        case .expired: .expired
        case .notYetValid: .notYetValid
        case .replayed: .replayed
        case .keysUnavailable: .keysUnavailable
        default: .malformed
        }
    }

    static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }

    /// What opening an envelope gives: "opened", the error code's name, or "unexpected <type>".
    func outcome(opening envelope: [UInt8]) -> String {
        Self.outcome { _ = try opener.open(envelope: envelope, now: Self.now) }
    }

    /// What opening an APNs body gives: "opened", the error code's name, or "unexpected <type>".
    func outcome(openingBody body: [UInt8]) -> String {
        Self.outcome { _ = try opener.open(body: body, now: Self.now) }
    }

    static func outcome(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "opened"
        } catch let error as SealedPushError {
            return error.code.name
        } catch {
            return "unexpected \(type(of: error))"
        }
    }
}

extension [UInt8] {
    /// A copy with one bit flipped.
    func flippingBit(_ bit: Int) -> [UInt8] {
        var copy = self
        copy[bit / 8] ^= 1 << UInt8(bit % 8)
        return copy
    }
}

extension TamperFixture {
    /// The extension step over this fixture's key ring (in memory), a fresh replay guard and the fixed clock, with
    /// a generous deadline so only the envelope decides the outcome.
    /// - Parameter fallback: The placeholder the step delivers on failure.
    func extensionStep(fallback: Placeholder) throws -> NotificationServiceStep {
        let receiver = try SealedPushReceiver(
            keyStore: InMemoryKeyStore(keyRing: ring), replayGuard: InMemoryReplayGuard(),
            serverPublicKeys: [identity.publicKey], topic: Self.topic, clock: .fixed(Self.now))
        return NotificationServiceStep(
            receiver: receiver, configuration: .init(deadline: .seconds(60), fallbackPlaceholder: fallback))
    }
}
