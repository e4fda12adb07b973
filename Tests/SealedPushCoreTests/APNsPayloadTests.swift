import Testing
@testable import SealedPushCore

@Suite struct APNsPayloadTests {
    @Test func defaultPlaceholderBody() {
        let body = APNsPayload.encode(placeholder: .default, envelope: [0xFB, 0xFF])
        #expect(String(decoding: body, as: UTF8.self)
            == #"{"aps":{"alert":{"body":"New notification"},"mutable-content":1},"sp":"-_8"}"#)
    }

    @Test func otherPlaceholders() {
        let titled = APNsPayload.encode(
            placeholder: .text(title: "Chat \"A\"", body: "New\nmessage", sound: "ping.caf"), envelope: [0])
        #expect(String(decoding: titled, as: UTF8.self)
            == #"{"aps":{"alert":{"title":"Chat \"A\"","body":"New\nmessage"},"sound":"ping.caf","mutable-content":1},"sp":"AA"}"#)
        let localized = APNsPayload.encode(placeholder: .localized(key: "NEW_MSG", args: ["2"]), envelope: [0])
        #expect(String(decoding: localized, as: UTF8.self)
            == #"{"aps":{"alert":{"loc-key":"NEW_MSG","loc-args":["2"]},"mutable-content":1},"sp":"AA"}"#)
    }

    @Test func budgetFromSpec() {
        // Spec §6.1: prefix + suffix = 73 bytes for the default placeholder; 2912 → 73 + 4014 = 4087.
        #expect(APNsPayload.prefix(placeholder: .default).count + APNsPayload.suffix.count == 73)
        #expect(APNsPayload.bodyLength(placeholder: .default, paddedPlaintextLength: 2912) == 4087)
        #expect(APNsPayload.bodyLength(placeholder: .default, paddedPlaintextLength: 128) == 73 + 302)
    }

    @Test(arguments: Padding.buckets)
    func bodyLengthIsExact(bucket: Int) {
        let envelope = [UInt8](repeating: 7, count: 82 + 16 + bucket)
        for placeholder in [Placeholder.default, .text(title: "Ünïcode ✉️", body: "x"), .localized(key: "K")] {
            #expect(APNsPayload.encode(placeholder: placeholder, envelope: envelope).count
                == APNsPayload.bodyLength(placeholder: placeholder, paddedPlaintextLength: bucket))
        }
    }

    @Test func budgetError() {
        do {
            try APNsPayload.checkBudget(4100)
            Issue.record("accepted 4100")
        } catch let error as SealedPushError {
            #expect(error.code == .payloadTooLarge)
            #expect(error.message.contains("4100") && error.message.contains("4096"))
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(throws: Never.self) { try APNsPayload.checkBudget(4096) }
    }

    private func code(_ body: String) -> SealedPushError.Code? {
        do {
            _ = try APNsPayload.extractEnvelope(fromBody: Array(body.utf8))
            return nil
        } catch let error as SealedPushError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test func extraction() throws {
        #expect(try APNsPayload.extractEnvelope(fromBody: Array(#"{"sp":"-_8","aps":{}}"#.utf8)) == [0xFB, 0xFF])
        #expect(code(#"{"aps":{}}"#) == .malformedPayload)
        #expect(code(#"{"sp":5}"#) == .malformedPayload)
        #expect(code(#"{"sp":"AA","sp":"AA"}"#) == .malformedPayload)
        #expect(code(#"["sp"]"#) == .malformedPayload)
        #expect(code(#"{"sp":"AA=="}"#) == .badEncoding)
        #expect(code(#"{"sp":"A+8"}"#) == .badEncoding)
        #expect(code(#"{"sp":""# + String(repeating: "A", count: 4100) + #""}"#) == .payloadTooLarge)
        #expect(try APNsPayload.extractEnvelope(fromUserInfo: ["sp": "AA", "aps": ["alert": "x"]]) == [0])
        #expect(throws: SealedPushError.self) { try APNsPayload.extractEnvelope(fromUserInfo: ["sp": 1]) }
        #expect(throws: SealedPushError.self) { try APNsPayload.extractEnvelope(fromUserInfo: [:]) }
    }
}
