import Testing
import SealedPushCore

/// Guards the bulk-copy string path of `JSONParser` (rewritten for speed: opening spent 12% of its time appending
/// scalars one by one): ASCII runs, escapes and multi-byte UTF-8 in every order decode to the same text, and the
/// strict checks still hold at run boundaries.
@Suite struct RegressionJSONStringTests {
    @Test(arguments: [
        (#""plain ascii run""#, "plain ascii run"),
        (#""a\"b\\c\/d\be\ff\ng\rh\ti""#, "a\"b\\c/d\u{08}e\u{0C}f\ng\rh\ti"),
        (#""é€😀 mixed é then ascii""#, "é€😀 mixed é then ascii"),
        (#""\u00e9\u20ac\ud83d\ude00""#, "é€😀"),
        (#""x\u0041y""#, "xAy"),
        (#""""#, ""),
        (#""😀""#, "😀"),
        (#""ab\u0000cd""#, "ab\u{0}cd"),
    ])
    func decodes(json: String, expected: String) throws {
        #expect(try JSONParser.parse(Array(json.utf8)) == .string(expected))
    }

    @Test(arguments: [
        Array(#""abc"#.utf8), Array("\"ab\u{01}c\"".utf8), Array(#""ab\"#.utf8), Array(#""ab\x""#.utf8),
        Array(#""ab"#.utf8) + [0xC3], Array(#""ab"#.utf8) + [0xC3, 0x22], Array(#""a"#.utf8) + [0xED, 0xA0, 0x80, 0x22],
        Array(#""a"#.utf8) + [0x80, 0x22], Array(#""\ud800x""#.utf8),
    ])
    func rejects(bytes: [UInt8]) {
        #expect(throws: SealedPushError.self) { _ = try JSONParser.parse(bytes) }
    }
}
