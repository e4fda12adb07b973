import Crypto
import SealedPushCore

extension KeyID {
    /// Computes the key id of an X25519 public key as defined in spec §2.2.
    ///
    /// `keyId(pk) = SHA-256("SealedPush key id v1" || 0x00 || pk)[0..<8]`, computed with swift-crypto's `SHA256`.
    ///
    /// - Parameter publicKey: The raw 32-byte X25519 public key.
    /// - Returns: The 8-byte key id.
    /// - Throws: `SealedPushError` with code `invalidKey` if `publicKey` is not 32 bytes long.
    public static func derived(fromPublicKey publicKey: [UInt8]) throws -> KeyID {
        guard publicKey.count == 32 else {
            throw SealedPushError(.invalidKey, "an X25519 public key is 32 bytes, got \(publicKey.count)")
        }
        var hasher = SHA256()
        hasher.update(data: KeyID.derivationPrefix)
        hasher.update(data: publicKey)
        let digest = Array(hasher.finalize())
        return try KeyID(bytes: Array(digest.prefix(KeyID.length)))
    }
}
