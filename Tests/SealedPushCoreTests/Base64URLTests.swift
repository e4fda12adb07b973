import Testing
@testable import SealedPushCore

@Suite struct Base64URLTests {
    // RFC 4648 §10 test vectors, without padding.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(plain: String, encoded: String) throws {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(try Base64URL.decode(encoded) == Array(plain.utf8))
        #expect(Base64URL.encodedLength(plain.utf8.count) == encoded.count)
    }

    @Test func urlAlphabet() throws {
        // 0xfb 0xff → bits 111110 111111 1111(00) → '-', '_', '8' (index 60) in the URL alphabet.
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(try Base64URL.decode("-_8") == [0xFB, 0xFF])
    }

    @Test(arguments: ["Zg==", "Zm9v+A", "Zm9v/A", "Z", "Zm9vY", "Zh", "Zm9", "Zm 9v", "Zm9v\n"])
    func rejectsNonCanonical(text: String) {
        #expect(throws: SealedPushError.self) { try Base64URL.decode(text) }
        do {
            _ = try Base64URL.decode(text)
        } catch let error as SealedPushError {
            #expect(error.code == .badEncoding)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}

@Suite struct HexTests {
    @Test func roundTrip() throws {
        #expect(Hex.encode([0x00, 0xAB, 0xFF]) == "00abff")
        #expect(try Hex.decode("00ABff") == [0x00, 0xAB, 0xFF])
        #expect(throws: SealedPushError.self) { try Hex.decode("abc") }
        #expect(throws: SealedPushError.self) { try Hex.decode("zz") }
    }
}
