import Testing
@testable import SealedPushCore

@Suite struct KeyTextTests {
    @Test func publicKeyTextForm() throws {
        let zeros = [UInt8](repeating: 0, count: 32)
        let text = KeyText.encodePublicKey(zeros)
        #expect(text == "SPK1:" + String(repeating: "A", count: 43))
        #expect(text.count == 48)
        #expect(try KeyText.decodePublicKey(text) == zeros)
        // 0xff * 32: 43 chars, last char carries 4 bits "1111" then two zero bits → '8' (index 60).
        let ones = [UInt8](repeating: 0xFF, count: 32)
        #expect(KeyText.encodePublicKey(ones) == "SPK1:" + String(repeating: "_", count: 42) + "8")
    }

    @Test(arguments: [
        "SPK2:" + String(repeating: "A", count: 43),  // wrong prefix
        "SPK1:" + String(repeating: "A", count: 42),  // short
        "SPK1:" + String(repeating: "A", count: 44),  // long
        "SPK1:" + String(repeating: "A", count: 42) + "B",  // non-canonical last character
        "SPK1:" + String(repeating: "A", count: 42) + "=",
        " SPK1:" + String(repeating: "A", count: 43),
    ])
    func rejectsBadPublicKeys(text: String) {
        do {
            _ = try KeyText.decodePublicKey(text)
            Issue.record("accepted \(text)")
        } catch let error as SealedPushError {
            #expect(error.code == .invalidKey)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func privateKeyFile() throws {
        let key = (0..<32).map { UInt8($0) }
        let file = KeyText.encodePrivateKeyFile(key)
        #expect(String(decoding: file, as: UTF8.self).hasPrefix("SPSK1:"))
        #expect(file.last == UInt8(ascii: "\n"))
        #expect(file.count == 6 + 43 + 1)
        #expect(try KeyText.decodePrivateKeyFile(file) == key)
        #expect(try KeyText.decodePrivateKeyFile(Array(file.dropLast())) == key)
        #expect(throws: SealedPushError.self) { try KeyText.decodePrivateKeyFile(file + [0x0A]) }
        #expect(throws: SealedPushError.self) { try KeyText.decodePrivateKeyFile(Array(file.prefix(20))) }
        #expect(throws: SealedPushError.self) { try KeyText.decodePrivateKeyFile([]) }
    }

    @Test func privateKeyErrorsDoNotEchoKeyMaterial() {
        let secretish = "SPSK1:" + String(repeating: "Q", count: 40)
        do {
            _ = try KeyText.decodePrivateKeyFile(Array(secretish.utf8))
        } catch let error as SealedPushError {
            #expect(!error.message.contains("QQQQ"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func keyIDTextForm() throws {
        let id = try KeyID(bytes: [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x99])
        #expect(id.hex == "0123456789abcdef")
        #expect(try KeyID(hex: "0123456789ABCDEF") == id)
        #expect(throws: SealedPushError.self) { try KeyID(hex: "0123") }
        #expect(throws: SealedPushError.self) { try KeyID(bytes: [1, 2, 3]) }
        #expect(KeyID.derivationPrefix.count == 21)
        #expect(KeyID.derivationPrefix.last == 0)
    }
}
