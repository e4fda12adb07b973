import SealedPushGateway
import Testing

/// API key text, digest and comparison (no database).
@Suite("API keys")
struct APIKeyTests {
    /// SHA-256 of the key text, expected value from Python's hashlib (outside this code).
    @Test func digestIsSHA256OfTheText() throws {
        let text = "sp_0123456789abcdef_" + String(repeating: "A", count: 43)
        let key = try #require(APIKey(parsing: text))
        #expect(key.id == "0123456789abcdef")
        let hex = key.digest.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        #expect(hex == "4eca8cab58107e2b813342070618cc020de97da02af4789776abf1821a9b5152")
    }

    @Test func generatedKeysParseAndDiffer() throws {
        let a = APIKey.generate()
        let b = APIKey.generate()
        #expect(a.text != b.text && a.id != b.id)
        #expect(APIKey(parsing: a.text)?.id == a.id)
        #expect(a.text.utf8.count == 63)
    }

    @Test(arguments: [
        "", "sp_", "sp_0123456789ABCDEF_" + String(repeating: "A", count: 43),  // uppercase id
        "sp_0123456789abcdef_" + String(repeating: "A", count: 42),  // short secret
        "sp_0123456789abcdef_" + String(repeating: "A", count: 42) + "=",  // padding
        "sp_0123456789abcdef-" + String(repeating: "A", count: 43),  // separator
        "xx_0123456789abcdef_" + String(repeating: "A", count: 43),  // prefix
        "Bearer sp_0123456789abcdef_" + String(repeating: "A", count: 43),
    ])
    func malformedKeysDoNotParse(text: String) {
        #expect(APIKey(parsing: text) == nil)
    }

    @Test func constantTimeEqualComparesWholeDigests() {
        let a = [UInt8](repeating: 7, count: 32)
        var b = a
        #expect(APIKey.constantTimeEqual(a, b))
        b[31] ^= 1
        #expect(!APIKey.constantTimeEqual(a, b))
        b = a
        b[0] ^= 0x80
        #expect(!APIKey.constantTimeEqual(a, b))
        #expect(!APIKey.constantTimeEqual(a, Array(a.prefix(31))))
    }

    /// The secret never appears in `description`, string interpolation or `dump`.
    @Test func secretIsNotPrinted() {
        let key = APIKey.generate()
        let secret = String(key.text.dropFirst(20))  // after "sp_<16 hex>_"
        var dumped = ""
        dump(key, to: &dumped)
        for printed in [key.description, "\(key)", String(reflecting: key), dumped] {
            let leaked = printed.contains(secret)  // (not printed by #expect when it fails)
            #expect(!leaked, "the secret appears in a printed form of \(printed.count) characters")
            #expect(printed.contains(key.id))
        }
    }
}
