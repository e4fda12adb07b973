import SealedPushTestSupport
import Testing

@testable import SealedPushServer

/// RFC 9180 known-answer tests for the suite (X25519, HKDF-SHA256, ChaCha20-Poly1305), modes base and auth:
/// every intermediate value and all 257 encryptions, byte for byte, against the published vectors.
@Suite struct RFC9180VectorTests {
    static let vectors: RFC9180Vectors? = try? RFC9180Vectors.load()

    @Test func vectorFileHasBothModes() throws {
        let vectors = try #require(Self.vectors)
        #expect(vectors.vector(mode: 0) != nil)
        #expect(vectors.vector(mode: 2) != nil)
        for vector in vectors.vectors {
            #expect(vector.kemID == HPKESuite.kemID)
            #expect(vector.kdfID == HPKESuite.kdfID)
            #expect(vector.aeadID == HPKESuite.aeadID)
            #expect(vector.encryptions.count == 257)
        }
    }

    @Test(arguments: [UInt8(0), UInt8(2)])
    func keyPairsMatch(mode: UInt8) throws {
        let vector = try #require(Self.vectors?.vector(mode: mode))
        #expect(try X25519.publicKey(privateKey: vector.skEm) == vector.pkEm)
        #expect(try X25519.publicKey(privateKey: vector.skRm) == vector.pkRm)
        if let skSm = vector.skSm {
            #expect(try X25519.publicKey(privateKey: skSm) == vector.pkSm)
        }
    }

    @Test(arguments: [UInt8(0), UInt8(2)])
    func keyScheduleAndEncryptions(mode: UInt8) throws {
        let vector = try #require(Self.vectors?.vector(mode: mode))
        let hpkeMode = try #require(HPKEKeySchedule.Mode(rawValue: mode))
        let schedule = HPKEKeySchedule(mode: hpkeMode, info: vector.info)
        #expect(schedule.context == vector.keyScheduleContext)

        let setup: (encapsulation: DHKEMX25519.Encapsulation, context: HPKESenderContext)
        switch hpkeMode {
        case .base:
            setup = try HPKESender.setupBase(
                recipientPublicKey: vector.pkRm, schedule: schedule, ephemeralPrivateKey: vector.skEm,
                includeExporter: true)
        case .auth:
            let skSm = try #require(vector.skSm)
            setup = try HPKESender.setupAuth(
                recipientPublicKey: vector.pkRm, senderPrivateKey: skSm, schedule: schedule,
                ephemeralPrivateKey: vector.skEm, includeExporter: true)
        }
        #expect(setup.encapsulation.enc == vector.enc)
        #expect(setup.encapsulation.sharedSecret.bytes == vector.sharedSecret)
        #expect(schedule.secret(sharedSecret: setup.encapsulation.sharedSecret).bytes == vector.secret)
        #expect(setup.context.key.bytes == vector.key)
        #expect(setup.context.baseNonce.bytes == vector.baseNonce)
        #expect(setup.context.exporterSecret?.bytes == vector.exporterSecret)

        var context = setup.context
        var mismatches: [Int] = []
        for (sequence, encryption) in vector.encryptions.enumerated() {
            #expect(context.sequenceNumber == UInt64(sequence))
            let ciphertext = try context.seal(aad: encryption.aad, plaintext: encryption.plaintext)
            if ciphertext != encryption.ciphertext { mismatches.append(sequence) }
        }
        #expect(mismatches.isEmpty, "ciphertexts differ at sequence numbers \(mismatches)")
        #expect(context.sequenceNumber == 257)

        for export in vector.exports {
            let value = try context.export(exporterContext: export.exporterContext, length: export.length)
            #expect(value?.bytes == export.exportedValue)
        }
    }

    /// The per-encryption nonces in the vectors pin `base_nonce XOR I2OSP(seq, 12)` independently of the
    /// ciphertexts; re-deriving them from the sequence number checks the XOR position and byte order.
    @Test(arguments: [UInt8(0), UInt8(2)])
    func nonceDerivationMatchesPublishedNonces(mode: UInt8) throws {
        let vector = try #require(Self.vectors?.vector(mode: mode))
        for (sequence, encryption) in vector.encryptions.enumerated() {
            var expected = vector.baseNonce
            expected[11] ^= UInt8(sequence & 0xff)
            expected[10] ^= UInt8(sequence >> 8)
            #expect(encryption.nonce == expected)
        }
    }

    /// The cached-static-DH path of AuthEncap gives the same shared secret as the two-DH path, and the RFC's.
    @Test func authEncapWithPrecomputedStaticValue() throws {
        let vector = try #require(Self.vectors?.vector(mode: 2))
        let skSm = try #require(vector.skSm)
        let pkSm = try #require(vector.pkSm)
        let staticValue = try X25519.sharedSecret(privateKey: skSm, publicKey: vector.pkRm)
        let encapsulation = try DHKEMX25519.authEncap(
            recipientPublicKey: vector.pkRm, senderPublicKey: pkSm, staticSharedValue: staticValue,
            ephemeralPrivateKey: vector.skEm)
        #expect(encapsulation.enc == vector.enc)
        #expect(encapsulation.sharedSecret.bytes == vector.sharedSecret)
    }
}
