import Testing
@testable import SealedPushCore

@Suite struct EnvelopeTests {
    static func sampleHeader() throws -> EnvelopeHeader {
        EnvelopeHeader(
            recipientKeyID: try KeyID(hex: "0001020304050607"), senderKeyID: try KeyID(hex: "1011121314151617"),
            messageID: Array(0x20...0x2F), issuedAt: 0x6500_0000, expiresAt: 0x6500_0000 + 86_400,
            enc: [UInt8](repeating: 0x42, count: 32))
    }

    @Test func headerLayoutMatchesSpec() throws {
        // Written out by hand from spec §3.
        let expected = "0101" + "0001020304050607" + "1011121314151617" + "202122232425262728292a2b2c2d2e2f"
            + "0000000065000000" + "0000000065015180" + String(repeating: "42", count: 32)
        let encoded = try Self.sampleHeader().encoded()
        #expect(encoded.count == 82)
        #expect(Hex.encode(encoded) == expected)
    }

    @Test func parsesWhatTheSpecDescribes() throws {
        let bytes = try Hex.decode(
            "0101" + "0001020304050607" + "1011121314151617" + "202122232425262728292a2b2c2d2e2f"
                + "0000000065000000" + "0000000065015180" + String(repeating: "42", count: 32))
            + [UInt8](repeating: 0xEE, count: 144)
        let envelope = try Envelope(parsing: bytes)
        #expect(envelope.header == (try Self.sampleHeader()))
        #expect(envelope.ciphertext == [UInt8](repeating: 0xEE, count: 144))
        #expect(envelope.encoded() == bytes)
    }

    private func expectCode(_ code: SealedPushError.Code, _ bytes: [UInt8]) {
        do {
            _ = try Envelope(parsing: bytes)
            Issue.record("parsed; expected \(code)")
        } catch let error as SealedPushError {
            #expect(error.code == code, "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func structuralErrors() throws {
        let good = try Self.sampleHeader().encoded() + [UInt8](repeating: 0, count: 144)
        expectCode(.truncated, Array(good.prefix(225)))
        expectCode(.truncated, [])
        expectCode(.malformedEnvelope, good + [UInt8](repeating: 0, count: 4096))
        var version = good
        version[0] = 2
        expectCode(.unsupportedVersion, version)
        var suite = good
        suite[1] = 7
        expectCode(.unsupportedSuite, suite)
        var header = try Self.sampleHeader()
        header.expiresAt = header.issuedAt - 1
        expectCode(.malformedEnvelope, header.encoded() + [UInt8](repeating: 0, count: 144))
        header.expiresAt = header.issuedAt + 2_419_201
        expectCode(.malformedEnvelope, header.encoded() + [UInt8](repeating: 0, count: 144))
        header.expiresAt = header.issuedAt + 2_419_200
        _ = try Envelope(parsing: header.encoded() + [UInt8](repeating: 0, count: 144))
    }

    @Test func hpkeInfo() throws {
        #expect(try EnvelopeV1.hpkeInfo(topic: "com.example.app") == Array("SealedPush envelope v1\u{0}com.example.app".utf8))
        #expect(throws: SealedPushError.self) { try EnvelopeV1.hpkeInfo(topic: "") }
        #expect(throws: SealedPushError.self) { try EnvelopeV1.hpkeInfo(topic: String(repeating: "a", count: 256)) }
        #expect(throws: SealedPushError.self) { try EnvelopeV1.hpkeInfo(topic: "a\u{0}b") }
    }
}
