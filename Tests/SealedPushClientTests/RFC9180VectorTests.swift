import Crypto
import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

/// RFC 9180 known answers, opened through the same HPKE wrapper the envelope opener uses.
@Suite("RFC 9180 vectors (X25519 / HKDF-SHA256 / ChaCha20-Poly1305)")
struct RFC9180VectorTests {
    @Test("all 257 encryptions of mode 0 and mode 2 open in sequence", arguments: [0, 2])
    func vectorsOpen(mode: Int) throws {
        let file = try RFC9180VectorFile.load()
        let matching = file.vectors.filter { $0.mode == mode }
        #expect(matching.count == 1)
        for vector in matching {
            #expect(vector.kem_id == 0x0020 && vector.kdf_id == 0x0001 && vector.aead_id == 0x0003)
            let privateKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Hex.decode(vector.skRm))
            #expect(Array(privateKey.publicKey.rawRepresentation) == (try Hex.decode(vector.pkRm)))
            let sender = try vector.pkSm.map { try Curve25519.KeyAgreement.PublicKey(rawRepresentation: Hex.decode($0)) }
            #expect((sender != nil) == (mode == 2))
            var context = try HPKERecipientWrapper(
                privateKey: privateKey,
                info: Hex.decode(vector.info),
                encapsulatedKey: Hex.decode(vector.enc),
                sender: sender
            )
            #expect(vector.encryptions.count == 257)
            for (index, encryption) in vector.encryptions.enumerated() {
                let plaintext = try context.open(Hex.decode(encryption.ct), authenticating: Hex.decode(encryption.aad))
                #expect(plaintext == (try Hex.decode(encryption.pt)), "mode \(mode) encryption \(index)")
            }
        }
    }

    @Test("a changed ciphertext byte, aad byte or the wrong mode fails to open")
    func tamperedVectorsFail() throws {
        let file = try RFC9180VectorFile.load()
        let vector = try #require(file.vectors.first { $0.mode == 2 })
        let privateKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Hex.decode(vector.skRm))
        let sender = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: Hex.decode(try #require(vector.pkSm)))
        let first = vector.encryptions[0]
        var ciphertext = try Hex.decode(first.ct)
        ciphertext[0] ^= 1
        var context = try HPKERecipientWrapper(
            privateKey: privateKey, info: Hex.decode(vector.info), encapsulatedKey: Hex.decode(vector.enc), sender: sender
        )
        #expect(throws: (any Error).self) { try context.open(ciphertext, authenticating: Hex.decode(first.aad)) }

        var aad = try Hex.decode(first.aad)
        aad.append(0)
        var context2 = try HPKERecipientWrapper(
            privateKey: privateKey, info: Hex.decode(vector.info), encapsulatedKey: Hex.decode(vector.enc), sender: sender
        )
        #expect(throws: (any Error).self) { try context2.open(Hex.decode(first.ct), authenticating: aad) }

        // Base mode cannot open an auth-mode encryption.
        var base = try HPKERecipientWrapper(
            privateKey: privateKey, info: Hex.decode(vector.info), encapsulatedKey: Hex.decode(vector.enc), sender: nil
        )
        #expect(throws: (any Error).self) { try base.open(Hex.decode(first.ct), authenticating: Hex.decode(first.aad)) }
    }

    @Test("key ids match SHA-256 values computed outside Swift (python hashlib)")
    func keyIDKnownAnswers() throws {
        // sha256(b"SealedPush key id v1\x00" + pk)[:8], computed with Python's hashlib.
        let pkRm = try Hex.decode("4310ee97d88cc1f088a5576c77ab0cf5c3ac797f3d95139c6c84b5429c59662a")
        #expect(try KeyID.derived(fromPublicKey: pkRm).hex == "95ce4e591b52bda9")
        #expect(try KeyID.derived(fromPublicKey: [UInt8](repeating: 0, count: 32)).hex == "a98408147749217b")
        #expect(throws: SealedPushError.self) { try KeyID.derived(fromPublicKey: [1, 2, 3]) }
    }
}
