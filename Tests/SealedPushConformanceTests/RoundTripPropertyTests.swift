import SealedPushClient
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport
import Testing

/// Random content sealed by the libsodium server opens on the swift-crypto client, and any single-byte change
/// anywhere in a sealed envelope is rejected.
@Suite struct RoundTripPropertyTests {
    static let topic = "com.example.property"
    let server: ServerIdentity
    let devicePrivate: [UInt8]
    let device: DevicePublicKey
    let opener: EnvelopeOpener

    init() throws {
        server = try ServerIdentity.generate()
        var generator = SplitMix64(seed: 0x5EA1_ED00)
        devicePrivate = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let deviceIdentity = try ServerIdentity(privateKey: devicePrivate)
        device = try DevicePublicKey(rawRepresentation: deviceIdentity.publicKey)
        opener = try EnvelopeOpener(devicePrivateKeys: [devicePrivate], serverPublicKeys: [server.publicKey], topic: Self.topic)
    }

    @Test func randomContentRoundTrips() throws {
        var generator = SplitMix64(seed: 2026)
        let now: UInt64 = 1_900_000_000
        var sealedCount = 0
        for round in 0..<300 {
            let content = RandomContent.make(using: &generator, large: round % 25 == 0)
            let placeholder: Placeholder = round % 3 == 0 ? .localized(key: "K", args: ["\(round)"]) : .default
            let sealer = try Sealer(identity: server, topic: Self.topic, placeholder: placeholder)
            let sealed: SealedNotification
            do {
                sealed = try sealer.seal(content, to: device, ttl: 3600, now: now)
            } catch let error as SealedPushError where error.code == .contentTooLarge || error.code == .payloadTooLarge {
                // Large random content may exceed the budget; the error must state the numbers.
                #expect(error.message.contains("4096") || error.message.contains("2910"), "\(error)")
                continue
            }
            sealedCount += 1
            #expect(sealed.payload.count <= 4096)
            let opened = try opener.open(body: sealed.payload, now: now + 1)
            #expect(opened.content == content, "round \(round)")
        }
        #expect(sealedCount > 250)
    }

    @Test func maximalAndEmptyFields() throws {
        let sealer = try Sealer(identity: server, topic: Self.topic)
        let now: UInt64 = 1_900_000_000
        let empty = NotificationContent(title: "", subtitle: "", body: "", sound: "", threadID: "", category: "",
                                        targetContentID: "", data: .object([:]))
        #expect(try opener.open(body: sealer.seal(empty, to: device, now: now).payload, now: now).content == empty)
        // {"body":"…"} has 11 bytes of framing: 2,899 characters make exactly 2,910 bytes, the largest that fits.
        let maximal = NotificationContent(body: String(repeating: "m", count: 2899))
        let sealed = try sealer.seal(maximal, to: device, now: now)
        #expect(sealed.payload.count == 4087)
        #expect(try opener.open(body: sealed.payload, now: now).content == maximal)
        #expect(throws: SealedPushError.self) {
            try sealer.seal(NotificationContent(body: String(repeating: "m", count: 2900)), to: device, now: now)
        }
        // A longer placeholder leaves less room: the same maximal content no longer fits the 4,096-byte body.
        let verbose = try Sealer(
            identity: server, topic: Self.topic, placeholder: .text(title: "A long placeholder title", body: "New message"))
        do {
            _ = try verbose.seal(maximal, to: device, now: now)
            Issue.record("sealed over budget")
        } catch let error as SealedPushError {
            #expect(error.code == .payloadTooLarge)
            #expect(error.message.contains("4096"))
        }
    }

    @Test func everySingleByteChangeIsRejected() throws {
        let sealer = try Sealer(identity: server, topic: Self.topic)
        let now: UInt64 = 1_900_000_000
        var generator = SplitMix64(seed: 99)
        for bodyLength in [10, 400, 2_000] {
            let sealed = try sealer.seal(
                NotificationContent(body: String(repeating: "é", count: bodyLength / 2)), to: device, now: now)
            #expect(try opener.open(body: sealed.payload, now: now).content.body != nil)
            for position in sealed.envelope.indices {
                var tampered = sealed.envelope
                tampered[position] ^= UInt8.random(in: 1...255, using: &generator)
                let payload = APNsPayload.encode(placeholder: .default, envelope: tampered)
                #expect(throws: SealedPushError.self, "byte \(position) of \(sealed.envelope.count)") {
                    try opener.open(body: payload, now: now)
                }
            }
        }
    }
}

/// Random notification content: unicode from several scripts, emoji, controls, empty and long fields, app data.
enum RandomContent {
    static let pools: [[Unicode.Scalar]] = [
        Array("abcXYZ 019.,!?-_/".unicodeScalars), Array("\"\\\n\t\r\u{01}\u{1F}\u{7F}".unicodeScalars),
        Array("éßøåçÑ€£".unicodeScalars), Array("日本語中文한국어".unicodeScalars), Array("😀👩‍👩‍👧🚀🇫🇷✉️".unicodeScalars),
        Array("\u{0301}\u{200D}\u{FEFF}\u{10FFFF}\u{E000}".unicodeScalars),
    ]

    static func string<G: RandomNumberGenerator>(using generator: inout G, maxLength: Int) -> String {
        let length = Int.random(in: 0...maxLength, using: &generator)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            let pool = pools[Int.random(in: 0..<pools.count, using: &generator)]
            scalars.append(pool[Int.random(in: 0..<pool.count, using: &generator)])
        }
        return String(scalars)
    }

    static func optionalString<G: RandomNumberGenerator>(using generator: inout G, maxLength: Int = 40) -> String? {
        Bool.random(using: &generator) ? string(using: &generator, maxLength: maxLength) : nil
    }

    static func json<G: RandomNumberGenerator>(using generator: inout G, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .number(Bool.random(using: &generator)
            ? Double(Int.random(in: -1_000_000...1_000_000, using: &generator))
            : Double.random(in: -1e6...1e6, using: &generator))
        case 3: return .string(string(using: &generator, maxLength: 12))
        case 4: return .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in json(using: &generator, depth: depth + 1) })
        default:
            var members = JSONObject()
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                members[string(using: &generator, maxLength: 6)] = json(using: &generator, depth: depth + 1)
            }
            return .object(members)
        }
    }

    static func make<G: RandomNumberGenerator>(using generator: inout G, large: Bool) -> NotificationContent {
        NotificationContent(
            title: optionalString(using: &generator), subtitle: optionalString(using: &generator),
            body: large ? string(using: &generator, maxLength: 1500) : optionalString(using: &generator, maxLength: 200),
            badge: Bool.random(using: &generator) ? Int.random(in: 0...Int(Int32.max), using: &generator) : nil,
            sound: optionalString(using: &generator, maxLength: 10), threadID: optionalString(using: &generator),
            category: optionalString(using: &generator, maxLength: 10),
            interruptionLevel: Bool.random(using: &generator) ? InterruptionLevel.allCases.randomElement(using: &generator) : nil,
            relevanceScore: Bool.random(using: &generator) ? Double.random(in: 0...1, using: &generator) : nil,
            targetContentID: optionalString(using: &generator),
            data: Bool.random(using: &generator) ? json(using: &generator) : nil)
    }
}
