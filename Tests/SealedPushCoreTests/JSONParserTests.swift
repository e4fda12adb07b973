import Testing
@testable import SealedPushCore

@Suite struct JSONParserTests {
    private func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    @Test func validDocuments() throws {
        #expect(try parse(#" {"a":[1,-2.5e3,true,false,null,"x"]} "#)
            == .object(["a": .array([.number(1), .number(-2500), .bool(true), .bool(false), .null, .string("x")])]))
        #expect(try parse(#""\ud83d\ude00 \u00e9 \/ \n""#) == .string("😀 é / \n"))
        #expect(try parse("\"😀\"") == .string("😀"))
        #expect(try parse("0") == .number(0))
    }

    @Test(arguments: [
        #"{"a":1,"a":2}"#, "[1,]", "{,}", "01", "1.", "-", "1e", "+1", ".5", "1e400", "nul", "\"abc", "[1] 2",
        "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\x\"", "\"a\u{01}b\"", "", " ", "{\"a\"}", "[",
        "{\"a\":1", "tru", "NaN", "Infinity",
    ])
    func rejects(text: String) {
        #expect(throws: SealedPushError.self) { try parse(text) }
    }

    @Test(arguments: [[0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],
                      [0x22, 0xE2, 0x82, 0x22], [0x22, 0xFF, 0x22], [0x22, 0x80, 0x22]] as [[UInt8]])
    func rejectsInvalidUTF8(bytes: [UInt8]) {
        #expect(throws: SealedPushError.self) { try JSONParser.parse(bytes) }
    }

    @Test func depthLimit() throws {
        let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        _ = try parse(ok)
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(throws: SealedPushError.self) { try parse(deep) }
        // A hostile 1 MB of '[' fails at the limit instead of recursing a million levels.
        let hostile = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        #expect(throws: SealedPushError.self) { try JSONParser.parse(hostile) }
    }

    @Test func errorCodeIsTheCallers() {
        do {
            _ = try JSONParser.parse(Array("{".utf8), errorCode: .malformedPayload)
        } catch let error as SealedPushError {
            #expect(error.code == .malformedPayload)
            #expect(error.message.contains("byte 1"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
