import Crypto
import Foundation

/// The alternative a Swift team would use: swift-crypto's own HPKE in mode_auth with the same suite
/// (DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305), the same `info`, the same padded plaintext and an
/// 82-byte associated data like the envelope header.
final class SwiftCryptoHPKE {
    let suite = HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .chaChaPoly)
    let serverKey: Curve25519.KeyAgreement.PrivateKey
    let deviceKey: Curve25519.KeyAgreement.PrivateKey
    let info: Data
    let aad = Data(repeating: 0x01, count: 82)
    let plaintext: Data
    private(set) var sealed: (enc: Data, ciphertext: Data)

    init(serverKey: Curve25519.KeyAgreement.PrivateKey, deviceKey: Curve25519.KeyAgreement.PrivateKey,
         info: [UInt8], paddedPlaintext: [UInt8]) throws {
        self.serverKey = serverKey
        self.deviceKey = deviceKey
        self.info = Data(info)
        self.plaintext = Data(paddedPlaintext)
        sealed = (Data(), Data())
        sealed = try seal()
    }

    /// `HPKE.Sender(recipientKey:ciphersuite:info:authenticatedBy:)` then one `seal(_:authenticating:)`.
    func seal() throws -> (enc: Data, ciphertext: Data) {
        var sender = try HPKE.Sender(
            recipientKey: deviceKey.publicKey, ciphersuite: suite, info: info, authenticatedBy: serverKey)
        let ciphertext = try sender.seal(plaintext, authenticating: aad)
        return (sender.encapsulatedKey, ciphertext)
    }

    /// `HPKE.Recipient(privateKey:ciphersuite:info:encapsulatedKey:authenticatedBy:)` then one `open`.
    func open() throws -> Data {
        var recipient = try HPKE.Recipient(
            privateKey: deviceKey, ciphersuite: suite, info: info, encapsulatedKey: sealed.enc,
            authenticatedBy: serverKey.publicKey)
        return try recipient.open(sealed.ciphertext, authenticating: aad)
    }
}
