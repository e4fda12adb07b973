import Foundation
import SealedPushCore
import Testing

@testable import SealedPushServer

@Suite struct SealerTests {
    static let content = NotificationContent(title: "Hi", body: "Secret meeting at noon", badge: 3, threadID: "t-42")

    private func makeSealer(placeholder: Placeholder = .default, cacheCapacity: Int = 16) throws -> Sealer {
        try Sealer(
            identity: ServerIdentity(privateKey: Fixtures.hex(Fixtures.serverPrivateKeyHex)), topic: Fixtures.topic,
            placeholder: placeholder, cacheCapacity: cacheCapacity)
    }

    private func device() throws -> DevicePublicKey {
        try DevicePublicKey(text: Fixtures.devicePublicKeyText)
    }

    private func randomDevice() throws -> DevicePublicKey {
        try DevicePublicKey(rawRepresentation: ServerIdentity.generate().publicKey)
    }

    private func expectError(
        _ code: SealedPushError.Code, containing fragments: [String] = [], _ body: () throws -> Void
    ) {
        #expect {
            try body()
        } throws: { error in
            guard let error = error as? SealedPushError, error.code == code else { return false }
            return fragments.allSatisfy { error.message.contains($0) }
        }
    }

    /// The deterministic entry point reproduces an envelope and body computed by an independent implementation.
    @Test func deterministicSealMatchesIndependentImplementation() throws {
        let sealed = try makeSealer().seal(
            Self.content, to: device(), ephemeralPrivateKey: Fixtures.ephemeralPrivateKey,
            messageID: Fixtures.messageID, issuedAt: Fixtures.issuedAt, expiresAt: Fixtures.expiresAt)
        #expect(sealed.envelope == (try Fixtures.hex(Fixtures.expectedEnvelopeHex)))
        #expect(String(decoding: sealed.payload, as: UTF8.self) == Fixtures.expectedPayload)
        #expect(sealed.messageID == Fixtures.messageID)
        #expect(sealed.issuedAt == Fixtures.issuedAt)
        #expect(sealed.expiresAt == Fixtures.expiresAt)
        #expect(sealed.recipientKeyID.hex == Fixtures.deviceKeyIDHex)
        #expect(sealed.senderKeyID.hex == Fixtures.serverKeyIDHex)
    }

    /// The raw-plaintext entry point (for negative vectors) seals exactly the bytes it is given: the padded form of
    /// the fixture content, written out by hand here, gives the independently computed envelope.
    @Test func rawPlaintextEntryPointSealsGivenBytes() throws {
        let json = Array(#"{"title":"Hi","body":"Secret meeting at noon","badge":3,"thread-id":"t-42"}"#.utf8)
        let padded = [0, UInt8(json.count)] + json + [UInt8](repeating: 0, count: 128 - 2 - json.count)
        let sealed = try makeSealer().seal(
            rawPlaintext: padded, to: device(), ephemeralPrivateKey: Fixtures.ephemeralPrivateKey,
            messageID: Fixtures.messageID, issuedAt: Fixtures.issuedAt, expiresAt: Fixtures.expiresAt)
        #expect(sealed.envelope == (try Fixtures.hex(Fixtures.expectedEnvelopeHex)))

        // 3,000 raw bytes: 73 + b64len(82 + 16 + 3,000 = 3,098) = 73 + 4,131 = 4,204 > 4,096.
        expectError(.payloadTooLarge, containing: ["4204", "4096"]) {
            _ = try makeSealer().seal(
                rawPlaintext: [UInt8](repeating: 0, count: 3_000), to: device(),
                ephemeralPrivateKey: Fixtures.ephemeralPrivateKey, messageID: Fixtures.messageID,
                issuedAt: Fixtures.issuedAt, expiresAt: Fixtures.expiresAt)
        }
    }

    /// A repeat seal (cached static DH) gives the same bytes as the first (computed) one.
    @Test func cachedAndUncachedSealsAgree() throws {
        for capacity in [0, 4] {
            let sealer = try makeSealer(cacheCapacity: capacity)
            for _ in 0..<3 {
                let sealed = try sealer.seal(
                    Self.content, to: device(), ephemeralPrivateKey: Fixtures.ephemeralPrivateKey,
                    messageID: Fixtures.messageID, issuedAt: Fixtures.issuedAt, expiresAt: Fixtures.expiresAt)
                #expect(sealed.envelope == (try Fixtures.hex(Fixtures.expectedEnvelopeHex)))
            }
            #expect(sealer.cachedDeviceCount == min(capacity, 1))
        }
    }

    @Test func randomizedSealHasSpecShape() throws {
        let sealer = try makeSealer()
        let now: UInt64 = 1_800_000_000
        let sealed = try sealer.seal(Self.content, to: device(), ttl: 600, now: now)
        let body = String(decoding: sealed.payload, as: UTF8.self)

        // Exact prefix and suffix of spec §6 with the default placeholder; mutable-content present.
        let prefix = #"{"aps":{"alert":{"body":"New notification"},"mutable-content":1},"sp":""#
        #expect(body.hasPrefix(prefix))
        #expect(body.hasSuffix(#""}"#))
        #expect(body.contains(#""mutable-content":1"#))
        // 82 header + 128 bucket + 16 tag = 226 bytes; b64len(226) = 302; 73 + 302 = 375.
        #expect(sealed.envelope.count == 226)
        #expect(sealed.payload.count == 375)

        // The sp member is unpadded base64url of the envelope (decoded here with Foundation, not Core).
        var sp = String(body.dropFirst(prefix.count).dropLast(2))
        #expect(sp.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        sp = sp.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        sp += String(repeating: "=", count: (4 - sp.count % 4) % 4)
        #expect(Data(base64Encoded: sp).map(Array.init) == sealed.envelope)

        // Header fields at their spec §3 offsets.
        let envelope = sealed.envelope
        #expect(envelope[0] == 1 && envelope[1] == 1)
        #expect(Array(envelope[2..<10]) == (try Fixtures.hex(Fixtures.deviceKeyIDHex)))
        #expect(Array(envelope[10..<18]) == (try Fixtures.hex(Fixtures.serverKeyIDHex)))
        #expect(Array(envelope[18..<34]) == sealed.messageID)
        #expect(envelope[34..<42].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } == now)
        #expect(envelope[42..<50].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } == now + 600)
        #expect(sealed.expiresAt == now + 600)

        // Core's parser (the other side of the module boundary) accepts it.
        let parsed = try Envelope(parsing: envelope)
        #expect(parsed.header.messageID == sealed.messageID)
        #expect(parsed.ciphertext.count == 128 + 16)
    }

    @Test func noPlaintextInPayload() throws {
        let content = NotificationContent(
            title: "Quarterly numbers", subtitle: "Board only", body: "Revenue up 12 percent", badge: 77,
            sound: "chime.caf", threadID: "thread-secret", category: "CATEGORY_SECRET")
        let sealed = try makeSealer().seal(content, to: device())
        // Everything in clear is the body minus the envelope text; the envelope text is base64url only.
        // (Searching the whole body would fail by chance whenever the random base64url happens to contain "77".)
        guard case .object(var members) = try JSONParser.parse(sealed.payload),
            case .string(let envelopeText) = members.removeValue(forKey: "sp")
        else {
            Issue.record("the payload has no envelope member")
            return
        }
        #expect(envelopeText.utf8.allSatisfy { $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0)
            || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        var clear = JSONWriter()
        clear.value(.object(members))
        let body = String(decoding: clear.bytes, as: UTF8.self)
        #expect(body == #"{"aps":{"alert":{"body":"New notification"},"mutable-content":1}}"#)
        for fragment in ["Quarterly", "numbers", "Board", "Revenue", "12 percent", "77", "chime", "thread-secret",
            "CATEGORY_SECRET", "badge", "thread-id", "category", "subtitle", "title"]
        {
            #expect(!body.contains(fragment), "payload reveals \(fragment)")
        }
    }

    @Test func freshEphemeralKeyAndMessageIDPerSeal() throws {
        let sealer = try makeSealer()
        let first = try sealer.seal(Self.content, to: device())
        let second = try sealer.seal(Self.content, to: device())
        #expect(first.messageID != second.messageID)
        #expect(first.envelope[50..<82] != second.envelope[50..<82])  // enc
        #expect(first.envelope.count == second.envelope.count)
    }

    /// `{"body":"…"}` around 3,000 characters is 3,011 bytes of JSON; at most 2,912 - 2 = 2,910 fit.
    @Test func contentTooLarge() throws {
        let content = NotificationContent(body: String(repeating: "x", count: 3_000))
        let sealer = try makeSealer()
        expectError(.contentTooLarge, containing: ["3011", "2910"]) { _ = try sealer.seal(content, to: device()) }
        #expect(sealer.cachedDeviceCount == 0)
        // 2,899 characters: 2,910 bytes, the largest content that fits (bucket 2,912, body 4,087 bytes).
        let largest = NotificationContent(body: String(repeating: "x", count: 2_899))
        #expect(try sealer.seal(largest, to: device()).payload.count == 4_087)
    }

    /// Largest bucket (2,912) with a 100-character placeholder body: prefix + suffix is
    /// `{"aps":{"alert":{"body":"` (25) + 100 + `"},"mutable-content":1},"sp":"` (30) + `"}` (2) = 157 bytes, the
    /// envelope is 82 + 2,912 + 16 = 3,010 bytes, b64len(3,010) = 4,014, so the body needs 4,171 > 4,096.
    @Test func payloadTooLargeStatesBytesNeededAndLimit() throws {
        let placeholder = Placeholder.text(body: String(repeating: "a", count: 100))
        let sealer = try makeSealer(placeholder: placeholder)
        // {"body":"…"} is 11 bytes of JSON around the text: 2,600 + 11 = 2,611 → bucket 2,912.
        let content = NotificationContent(body: String(repeating: "y", count: 2_600))
        expectError(.payloadTooLarge, containing: ["4171", "4096"]) { _ = try sealer.seal(content, to: device()) }
        #expect(sealer.cachedDeviceCount == 0)  // rejected before any cryptography

        // The same content fits with the default placeholder: 73 + 4,014 = 4,087 bytes.
        let sealed = try makeSealer().seal(content, to: device())
        #expect(sealed.payload.count == 4_087)
    }

    @Test(arguments: [UInt64(0), EnvelopeV1.maxLifetime + 1, UInt64.max])
    func ttlOutOfRangeIsInvalidArgument(ttl: UInt64) throws {
        expectError(.invalidArgument, containing: ["ttl"]) {
            _ = try makeSealer().seal(Self.content, to: device(), ttl: ttl)
        }
    }

    @Test func ttlBoundsAccepted() throws {
        let sealer = try makeSealer()
        #expect(try sealer.seal(Self.content, to: device(), ttl: 1, now: 100).expiresAt == 101)
        #expect(try sealer.seal(Self.content, to: device(), ttl: 2_419_200, now: 100).expiresAt == 2_419_300)
    }

    @Test func timestampOverflowIsInvalidArgument() throws {
        expectError(.invalidArgument) {
            _ = try makeSealer().seal(Self.content, to: device(), ttl: 10, now: UInt64.max - 5)
        }
    }

    @Test func deterministicEntryValidatesInputs() throws {
        let sealer = try makeSealer()
        expectError(.invalidArgument) {
            _ = try sealer.seal(
                Self.content, to: device(), ephemeralPrivateKey: Fixtures.ephemeralPrivateKey,
                messageID: Array(Fixtures.messageID.prefix(15)), issuedAt: 10, expiresAt: 20)
        }
        expectError(.invalidArgument) {
            _ = try sealer.seal(
                Self.content, to: device(), ephemeralPrivateKey: Fixtures.ephemeralPrivateKey,
                messageID: Fixtures.messageID, issuedAt: 20, expiresAt: 10)
        }
        expectError(.invalidArgument) {
            _ = try sealer.seal(
                Self.content, to: device(), ephemeralPrivateKey: Fixtures.ephemeralPrivateKey,
                messageID: Fixtures.messageID, issuedAt: 0, expiresAt: 2_419_201)
        }
        expectError(.invalidKey) {
            _ = try sealer.seal(
                Self.content, to: device(), ephemeralPrivateKey: [1, 2, 3],
                messageID: Fixtures.messageID, issuedAt: 0, expiresAt: 10)
        }
    }

    /// A low-order device key makes X25519 produce zeros; the sealer reports `invalidKey` naming the key id.
    @Test func lowOrderDeviceKeyIsInvalidKey() throws {
        let zeroKey = try DevicePublicKey(rawRepresentation: [UInt8](repeating: 0, count: 32))
        let sealer = try makeSealer()
        expectError(.invalidKey, containing: [zeroKey.keyID.hex]) { _ = try sealer.seal(Self.content, to: zeroKey) }
        #expect(sealer.cachedDeviceCount == 0)
    }

    @Test(arguments: ["", "a\u{0}b", String(repeating: "t", count: 256)])
    func invalidTopic(topic: String) throws {
        expectError(.invalidTopic) {
            _ = try Sealer(identity: ServerIdentity.generate(), topic: topic)
        }
    }

    @Test func negativeCacheCapacityIsInvalidArgument() throws {
        expectError(.invalidArgument) { _ = try makeSealer(cacheCapacity: -1) }
    }

    /// Capacity N, N + 1 devices: the cache holds N.
    @Test func staticDHCacheIsBounded() throws {
        let sealer = try makeSealer(cacheCapacity: 5)
        for _ in 0..<5 { _ = try sealer.seal(Self.content, to: randomDevice()) }
        #expect(sealer.cachedDeviceCount == 5)
        _ = try sealer.seal(Self.content, to: randomDevice())
        #expect(sealer.cachedDeviceCount == 5)
    }

    @Test func defaultCacheCapacity() throws {
        let sealer = try Sealer(identity: ServerIdentity.generate(), topic: "com.example.app")
        #expect(sealer.cacheCapacity == 10_000)
        #expect(Sealer.defaultCacheCapacity == 10_000)
    }

    @Test func concurrentSealsFromManyTasks() async throws {
        let sealer = try makeSealer(cacheCapacity: 4)
        let devices = try (0..<8).map { _ in try randomDevice() }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<32 {
                group.addTask {
                    try sealer.seal(Self.content, to: devices[index % devices.count]).envelope.count
                }
            }
            for try await count in group { #expect(count == 226) }
        }
        #expect(sealer.cachedDeviceCount == 4)
    }
}
