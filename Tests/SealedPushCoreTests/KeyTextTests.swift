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

@Suite("Key text errors never echo what was given")
struct KeyTextEchoTests {
    /// A private key file's text, pasted where a public key belongs (the CLI's `--device-public`, a device
    /// registration's `publicKey`): the error names it as a private key and shows none of its characters.
    @Test func privateKeyGivenAsPublicKey() {
        let body = "qA9vr4uxWtjVu6qDgn1bZEi56YDhoki7P-Hxiq7q9jI"  // 43 base64url characters, as a key file holds
        for text in ["SPSK1:" + body, "SPSK1:" + body + "\n", "SPSK1:" + body.prefix(20)] {
            do {
                _ = try KeyText.decodePublicKey(text)
                Issue.record("accepted a private key as a public key")
            } catch let error as SealedPushError {
                #expect(error.code == .invalidKey)
                #expect(error.message.contains("private key"), "\(error.message)")
                #expect(!error.message.contains(String(body.prefix(8))), "echoed: \(error.message)")
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    /// Anything else that is not a public key is described by its length, not shown: it may be another secret.
    @Test func otherTextNotEchoed() {
        let apiKey = "sp_live_4f9a1c7e2b8d6a3f0e5c9b7a2d4f6e8c"
        for text in [apiKey, "SPK1:" + apiKey] {
            do {
                _ = try KeyText.decodePublicKey(text)
                Issue.record("accepted \(text.count) characters")
            } catch let error as SealedPushError {
                #expect(error.code == .invalidKey)
                #expect(!error.message.contains("4f9a1c7e"), "echoed: \(error.message)")
                #expect(error.message.contains("\(text.utf8.count)"), "\(error.message)")
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    /// A private key standing alone (a key ring's `privateKey` member, `Specs/keyring-v1.md` §2) is exactly the
    /// prefix and 43 characters: the key file's final newline is not part of it.
    @Test func privateKeyTextIsStrict() throws {
        let raw = [UInt8](repeating: 7, count: 32)
        var file = KeyText.encodePrivateKeyFile(raw)
        #expect(try KeyText.decodePrivateKeyFile(file) == raw)
        #expect(file.last == UInt8(ascii: "\n"))
        #expect(throws: SealedPushError.self) { try KeyText.decodePrivateKey(file) }
        file.removeLast()
        #expect(try KeyText.decodePrivateKey(file) == raw)
    }
}
