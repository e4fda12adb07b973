import SealedPushTestSupport
import Testing

@testable import SealedPushServer

@Suite struct X25519Tests {
    private func hex(_ text: String) throws -> [UInt8] {
        try #require(RFC9180Vectors.bytes(fromHex: text))
    }

    /// RFC 7748 §6.1: Alice's and Bob's key pairs and their shared secret.
    @Test func rfc7748DiffieHellman() throws {
        let alicePrivate = try hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        let alicePublic = try hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        let bobPrivate = try hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
        let bobPublic = try hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        let shared = try hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        #expect(try X25519.publicKey(privateKey: alicePrivate) == alicePublic)
        #expect(try X25519.publicKey(privateKey: bobPrivate) == bobPublic)
        #expect(try X25519.sharedSecret(privateKey: alicePrivate, publicKey: bobPublic).bytes == shared)
        #expect(try X25519.sharedSecret(privateKey: bobPrivate, publicKey: alicePublic).bytes == shared)
    }

    /// Low-order points give an all-zero shared value, which RFC 9180 §7.1.4 requires to be rejected.
    @Test(arguments: [
        "0000000000000000000000000000000000000000000000000000000000000000",  // 0
        "0100000000000000000000000000000000000000000000000000000000000000",  // 1
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",  // order 8
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // p - 1
    ])
    func lowOrderPublicKeyIsRejected(point: String) throws {
        let privateKey = [UInt8](repeating: 0x42, count: 32)
        let publicKey = try hex(point)
        #expect(throws: HPKEError.zeroSharedSecret) {
            _ = try X25519.sharedSecret(privateKey: privateKey, publicKey: publicKey)
        }
        #expect(throws: HPKEError.zeroSharedSecret) {
            _ = try DHKEMX25519.encap(recipientPublicKey: publicKey, ephemeralPrivateKey: privateKey)
        }
    }

    @Test func wrongLengthsAreRejected() {
        #expect(throws: HPKEError.invalidLength(what: "X25519 private key", expected: 32, actual: 31)) {
            _ = try X25519.publicKey(privateKey: [UInt8](repeating: 1, count: 31))
        }
        #expect(throws: HPKEError.invalidLength(what: "X25519 public key", expected: 32, actual: 0)) {
            _ = try X25519.sharedSecret(privateKey: [UInt8](repeating: 1, count: 32), publicKey: [UInt8]())
        }
    }

    /// The public key comes from libsodium's Edwards table and the birational map; the variable-base Montgomery
    /// ladder X25519(sk, 9) is an independent libsodium path to the same bytes. Random keys plus the edge scalars:
    /// all zero (the Edwards route refuses it and the ladder answers), all ones, small values, one bit set.
    @Test func publicKeyMatchesTheMontgomeryLadder() throws {
        let basePoint: [UInt8] = [9] + [UInt8](repeating: 0, count: 31)
        var keys: [[UInt8]] = [
            [UInt8](repeating: 0, count: 32), [UInt8](repeating: 0xff, count: 32),
            [UInt8](repeating: 0x80, count: 32), [UInt8](repeating: 0x7f, count: 32),
        ]
        for value in 1...16 { keys.append([UInt8(value)] + [UInt8](repeating: 0, count: 31)) }
        for bit in 0..<256 {
            var key = [UInt8](repeating: 0, count: 32)
            key[bit / 8] = 1 << (bit % 8)
            keys.append(key)
        }
        for _ in 0..<2_000 { keys.append(try X25519.generatePrivateKey().bytes) }
        var mismatches = 0
        for key in keys where try X25519.publicKey(privateKey: key) != X25519.sharedSecret(
            privateKey: key, publicKey: basePoint
        ).bytes {
            mismatches += 1
        }
        #expect(mismatches == 0, "\(mismatches) of \(keys.count) public keys differ from the ladder")
    }

    @Test func generatedKeysDiffer() throws {
        let first = try X25519.generatePrivateKey()
        let second = try X25519.generatePrivateKey()
        #expect(first.count == 32)
        #expect(first.bytes != second.bytes)
    }
}
