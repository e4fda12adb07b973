import SealedPushTestSupport
import Testing

@testable import SealedPushServer

/// RFC 9180 known answers for the recipient side (what opens receipts, `Specs/control-v1.md` §4): AuthDecap gives
/// the published shared secret, and every one of the 257 published encryptions opens to its plaintext with the
/// published key and nonce; a flipped bit does not open.
@Suite struct RFC9180RecipientTests {
    @Test func authDecapAndOpenMatchThePublishedVector() throws {
        let vector = try #require(try RFC9180Vectors.load().vector(mode: 2))
        let pkSm = try #require(vector.pkSm)
        let shared = try HPKERecipient.authDecap(
            enc: vector.enc, recipientPrivateKey: SecretBytes(copying: vector.skRm), senderPublicKey: pkSm)
        #expect(shared.bytes == vector.sharedSecret)
        // With the static-static value given (what a receipt opener keeps per device key): the same published secret.
        let kept = try HPKERecipient.authDecap(
            enc: vector.enc, recipientPrivateKey: SecretBytes(copying: vector.skRm), senderPublicKey: pkSm,
            recipientPublicKey: vector.pkRm,
            staticSharedValue: X25519.sharedSecret(privateKey: SecretBytes(copying: vector.skRm), publicKey: pkSm))
        #expect(kept.bytes == vector.sharedSecret)
        let key = SecretBytes(copying: vector.key)
        var mismatches: [Int] = []
        for (sequence, encryption) in vector.encryptions.enumerated() {
            let opened = try HPKERecipient.open(
                encryption.ciphertext, aad: encryption.aad, key: key, nonce: SecretBytes(copying: encryption.nonce))
            if opened?.bytes != encryption.plaintext { mismatches.append(sequence) }
        }
        #expect(mismatches.isEmpty, "plaintexts differ at sequence numbers \(mismatches)")
        // SetupAuthR and the first Open together, from the keys alone.
        let first = vector.encryptions[0]
        let opened = try HPKERecipient.openAuth(
            first.ciphertext, aad: first.aad, enc: vector.enc, recipientPrivateKey: SecretBytes(copying: vector.skRm),
            senderPublicKey: pkSm, schedule: HPKEKeySchedule(mode: .auth, info: vector.info))
        #expect(opened?.bytes == first.plaintext)
        var flipped = first.ciphertext
        flipped[0] ^= 1
        #expect(try HPKERecipient.openAuth(
            flipped, aad: first.aad, enc: vector.enc, recipientPrivateKey: SecretBytes(copying: vector.skRm),
            senderPublicKey: pkSm, schedule: HPKEKeySchedule(mode: .auth, info: vector.info)) == nil)
        // Another sender key (mode_auth authenticates the sender) does not open it either.
        #expect(try HPKERecipient.openAuth(
            first.ciphertext, aad: first.aad, enc: vector.enc, recipientPrivateKey: SecretBytes(copying: vector.skRm),
            senderPublicKey: vector.pkEm, schedule: HPKEKeySchedule(mode: .auth, info: vector.info)) == nil)
    }
}
