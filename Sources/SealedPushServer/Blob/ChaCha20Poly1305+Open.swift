internal import CSodium

extension ChaCha20Poly1305 {
    /// Verifies and decrypts `ciphertext || tag` (libsodium's `crypto_aead_chacha20poly1305_ietf_decrypt`).
    ///
    /// - Parameters:
    ///   - key: 32 bytes.
    ///   - nonce: 12 bytes.
    ///   - sealed: The ciphertext followed by the 16-byte tag.
    ///   - out: Exactly `sealed.count - 16` bytes; written only if the tag verifies.
    /// - Returns: Whether the tag verified (with empty associated data).
    static func open(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, sealed: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard key.count == HPKESuite.keyLength, let keyBase = key.baseAddress,
            nonce.count == HPKESuite.nonceLength, let nonceBase = nonce.baseAddress,
            sealed.count >= HPKESuite.tagLength, let sealedBase = sealed.baseAddress,
            out.count == sealed.count - HPKESuite.tagLength
        else { return false }
        var scratch: UInt8 = 0
        var written: UInt64 = 0
        let status = withUnsafeMutablePointer(to: &scratch) { fallback in
            crypto_aead_chacha20poly1305_ietf_decrypt(
                out.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback, &written, nil,
                sealedBase.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count), nil, 0,
                nonceBase.assumingMemoryBound(to: UInt8.self), keyBase.assumingMemoryBound(to: UInt8.self))
        }
        return status == 0 && written == UInt64(out.count)
    }
}
