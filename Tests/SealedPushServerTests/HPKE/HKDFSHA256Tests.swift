import SealedPushTestSupport
import Testing

@testable import SealedPushServer

/// HKDF-SHA256 against RFC 5869 Appendix A, test cases 1–3.
@Suite struct HKDFSHA256Tests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let ikm: String, salt: String, info: String, length: Int, prk: String, okm: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "A.1 basic",
            ikm: "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
            salt: "000102030405060708090a0b0c",
            info: "f0f1f2f3f4f5f6f7f8f9",
            length: 42,
            prk: "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
            okm: "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
        Case(
            name: "A.2 longer inputs",
            ikm: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
                + "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
                + "404142434445464748494a4b4c4d4e4f",
            salt: "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
                + "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
                + "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
            info: "b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecf"
                + "d0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
                + "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
            length: 82,
            prk: "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
            okm: "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
                + "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
                + "cc30c58179ec3e87c14c01d5c1f3434f1d87"),
        Case(
            name: "A.3 zero-length salt and info",
            ikm: "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
            salt: "",
            info: "",
            length: 42,
            prk: "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
            okm: "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
    ]

    private func hex(_ text: String) throws -> [UInt8] {
        try #require(RFC9180Vectors.bytes(fromHex: text))
    }

    @Test(arguments: cases)
    func rfc5869(_ testCase: Case) throws {
        let prk = HKDFSHA256.extract(salt: try hex(testCase.salt), ikm: try hex(testCase.ikm))
        #expect(prk.bytes == (try hex(testCase.prk)))
        let okm = try HKDFSHA256.expand(prk: prk, info: try hex(testCase.info), length: testCase.length)
        #expect(okm.bytes == (try hex(testCase.okm)))
    }

    @Test func expandRejectsTooLongOutput() {
        let prk = [UInt8](repeating: 7, count: 32)
        #expect(throws: HPKEError.outputTooLong(requested: 255 * 32 + 1, limit: 255 * 32)) {
            _ = try HKDFSHA256.expand(prk: prk, info: [UInt8](), length: 255 * 32 + 1)
        }
        #expect((try? HKDFSHA256.expand(prk: prk, info: [UInt8](), length: 255 * 32))?.count == 255 * 32)
    }
}
