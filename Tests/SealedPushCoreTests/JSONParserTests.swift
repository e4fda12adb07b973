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

    /// RFC 8259 sets no length on a number, and the envelope spec has receivers accept any valid JSON (a sender's
    /// decimal type may write many digits): long literals are read and rounded like short ones. The values are exact
    /// by arithmetic: 1.000…0 is 1; 1 followed by 63 zeros times 10^-60 is 1,000; 0.1 followed by zeros and a final 1
    /// 300 places down rounds to the double nearest 0.1.
    @Test func longNumbers() throws {
        #expect(try parse("1." + String(repeating: "0", count: 64)) == .number(1))
        #expect(try parse("1" + String(repeating: "0", count: 63) + "e-60") == .number(1000))
        #expect(try parse("0.1" + String(repeating: "0", count: 300) + "1") == .number(0.1))
        #expect(try parse("-" + "2" + String(repeating: "0", count: 299) + ".5e-300") == .number(-0.2))  // −(0.2 + 5e-301)
        let content = #"{"data":"# + "1." + String(repeating: "0", count: 100) + "}"
        #expect(try parse(content) == .object(["data": .number(1)]))
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

/// Review items 5 and 6 and the number rules of envelope spec §4.
@Suite struct JSONParserReviewTests {
    /// Item 6: RFC 8259 compares names by code points; NFC "é" and NFD "e + U+0301" are two members.
    @Test func normalizationVariantsAreDistinctNames() throws {
        let value = try JSONParser.parse(Array(#"{"\u00e9":1,"e\u0301":2}"#.utf8))
        let object = try #require(value.objectValue)
        #expect(object.count == 2)
        #expect(object["\u{e9}"] == .number(1))
        #expect(object["e\u{301}"] == .number(2))
        // The same spellings written raw in UTF-8.
        let raw = try JSONParser.parse(Array("{\"\u{e9}\":1,\"e\u{301}\":2}".utf8))
        #expect(raw.objectValue?.count == 2)
        // Canonical order is by UTF-8 bytes: "e\u{301}" (0x65 …) before "\u{e9}" (0xC3 0xA9).
        var writer = JSONWriter()
        writer.value(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "{\"e\u{301}\":2,\"\u{e9}\":1}")
        // A true duplicate is still one.
        #expect(throws: SealedPushError.self) { try JSONParser.parse(Array(#"{"\u00e9":1,"\u00e9":2}"#.utf8)) }
    }

    /// Item 5: the parser also reads decrypted content; its messages name an offset and a category only.
    @Test(arguments: [
        #"{"acct-DE89370400440532013000":1,"acct-DE89370400440532013000":2}"#,
        #"{"x":"acct-DE89370400440532013000\q"}"#, #"{"x":acct-DE89370400440532013000}"#,
        #"{"x":"acct-DE89370400440532013000"} acct-DE89370400440532013000"#,
        #"{"x":9007199254740993,"y":"acct-DE89370400440532013000"}"#,
    ])
    func messagesNeverEchoInput(text: String) {
        do {
            _ = try JSONParser.parse(Array(text.utf8))
            Issue.record("accepted \(text)")
        } catch let error as SealedPushError {
            #expect(error.message.contains("at byte"))
            for fragment in ["acct", "DE8937", "\\q", "0x61"] {
                #expect(!error.message.contains(fragment), "\(error.message)")
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func duplicateOffsetPointsAtTheRepeatedName() throws {
        do {
            _ = try JSONParser.parse(Array(#"{"a":1,"b":2,"a":3}"#.utf8))
        } catch let error as SealedPushError {
            // { "a" : 1 , "b" : 2 , "a" — the second "a" starts at byte 13.
            #expect(error.message == "invalid JSON at byte 13: a duplicated member name")
        }
    }

    @Test func integersBeyondTwoToThe53AreRefusedOthersRound() throws {
        #expect(try JSONParser.parse(Array("9007199254740991".utf8)) == .number(9_007_199_254_740_991))
        #expect(try JSONParser.parse(Array("-9007199254740991".utf8)) == .number(-9_007_199_254_740_991))
        for text in ["9007199254740992", "9007199254740993", "-9007199254740993", "1e400", "-1e400",
                     "123456789012345678901234567890"] {
            #expect(throws: SealedPushError.self, "\(text)") { try JSONParser.parse(Array(text.utf8)) }
        }
        // With a fraction or an exponent, a number rounds to the nearest double like any other.
        #expect(try JSONParser.parse(Array("9007199254740993.0".utf8)) == .number(9_007_199_254_740_992))
        #expect(try JSONParser.parse(Array("1e16".utf8)) == .number(1e16))
    }

    @Test func byteOrderMarkIsRefused() {
        #expect(throws: SealedPushError.self) { try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("{}".utf8)) }
    }

    @Test func hostileObjectWithManyMembersParsesInNearLinearTime() throws {
        // 150,000 members: one sort, not a quadratic insertion.
        var text = "{"
        for index in 0..<150_000 { text += (index == 0 ? "" : ",") + "\"k\(index)\":\(index % 10)" }
        text += "}"
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(value.objectValue?.count == 150_000)
        #expect(value.objectValue?["k149999"] == .number(9))
    }
}

/// The canonical number rule (spec §4.1) against the spec's own examples, written out by hand (the vector file's
/// `canonicalNumbers` are made by this writer and checked independently by the Python tool).
@Suite struct CanonicalNumberTests {
    @Test(arguments: [
        (0.0, "0"), (-0.0, "0"), (-3, "-3"), (42, "42"), (9_007_199_254_740_991, "9007199254740991"),
        (9_007_199_254_740_992, "9.007199254740992e+15"), (1e16, "1e+16"), (0.5, "0.5"), (0.0001, "0.0001"),
        (0.00001, "1e-05"), (2.5e-7, "2.5e-07"), (-123.456, "-123.456"), (1000000000000000.5, "1000000000000000.5"),
        (1.2345678901234568e+20, "1.2345678901234568e+20"), (.leastNonzeroMagnitude, "5e-324"),
        (1.7976931348623157e+308, "1.7976931348623157e+308"),
    ] as [(Double, String)])
    func specExamples(value: Double, text: String) {
        #expect(JSONWriter.canonicalNumber(value) == text)
    }
}
