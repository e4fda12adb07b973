import SealedPushCore

extension KeyID {
    /// The key id of an X25519 public key (spec §2.2), computed with libsodium's `crypto_hash_sha256`:
    /// the first 8 bytes of `SHA-256("SealedPush key id v1" || 0x00 || pk)`.
    ///
    /// - Parameter publicKey: The 32-byte public key.
    /// - Throws: `SealedPushError` with code `invalidKey` if `publicKey` is not 32 bytes.
    init(derivingFrom publicKey: [UInt8]) throws {
        guard publicKey.count == X25519.keyLength else {
            throw SealedPushError(
                .invalidKey, "an X25519 public key is \(X25519.keyLength) bytes, got \(publicKey.count)")
        }
        let digest = Sodium.sha256(KeyID.derivationPrefix, publicKey)
        try self.init(bytes: Array(digest.prefix(KeyID.length)))
    }
}
