internal import CSodium

/// ChaCha20-Poly1305 (RFC 8439, 96-bit nonce) on libsodium's `crypto_aead_chacha20poly1305_ietf_encrypt`.
enum ChaCha20Poly1305 {
    /// Encrypts `plaintext` and writes `ciphertext || tag` to `out`.
    ///
    /// - Parameters:
    ///   - key: 32 bytes.
    ///   - nonce: 12 bytes.
    ///   - aad: The associated data.
    ///   - plaintext: The plaintext.
    ///   - out: Exactly `plaintext.count + 16` bytes.
    /// - Throws: ``HPKEError`` for wrong lengths or a libsodium failure.
    static func seal(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        plaintext: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) throws {
        guard key.count == HPKESuite.keyLength, let keyBase = key.baseAddress else {
            throw HPKEError.invalidLength(what: "AEAD key", expected: HPKESuite.keyLength, actual: key.count)
        }
        guard nonce.count == HPKESuite.nonceLength, let nonceBase = nonce.baseAddress else {
            throw HPKEError.invalidLength(what: "AEAD nonce", expected: HPKESuite.nonceLength, actual: nonce.count)
        }
        let expected = plaintext.count + HPKESuite.tagLength
        guard out.count == expected, let outBase = out.baseAddress else {
            throw HPKEError.invalidLength(what: "AEAD output", expected: expected, actual: out.count)
        }
        var written: UInt64 = 0
        let status = crypto_aead_chacha20poly1305_ietf_encrypt(
            outBase.assumingMemoryBound(to: UInt8.self), &written,
            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
            aad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(aad.count),
            nil,
            nonceBase.assumingMemoryBound(to: UInt8.self),
            keyBase.assumingMemoryBound(to: UInt8.self))
        guard status == 0, written == UInt64(expected) else {
            throw HPKEError.primitiveFailed("crypto_aead_chacha20poly1305_ietf_encrypt")
        }
    }
}

extension ChaCha20Poly1305 {
    /// Decrypts `ciphertext || tag` into `out`, verifying the tag first (libsodium's
    /// `crypto_aead_chacha20poly1305_ietf_decrypt` writes nothing on a mismatch).
    ///
    /// - Parameters:
    ///   - key: 32 bytes.
    ///   - nonce: 12 bytes.
    ///   - aad: The associated data.
    ///   - ciphertext: The ciphertext with its 16-byte tag.
    ///   - out: Exactly `ciphertext.count - 16` bytes.
    /// - Returns: false when the tag does not verify.
    /// - Throws: ``HPKEError`` for wrong lengths.
    static func open(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) throws -> Bool {
        guard key.count == HPKESuite.keyLength, let keyBase = key.baseAddress else {
            throw HPKEError.invalidLength(what: "AEAD key", expected: HPKESuite.keyLength, actual: key.count)
        }
        guard nonce.count == HPKESuite.nonceLength, let nonceBase = nonce.baseAddress else {
            throw HPKEError.invalidLength(what: "AEAD nonce", expected: HPKESuite.nonceLength, actual: nonce.count)
        }
        guard ciphertext.count >= HPKESuite.tagLength, let ciphertextBase = ciphertext.baseAddress else {
            throw HPKEError.invalidLength(what: "AEAD ciphertext", expected: HPKESuite.tagLength, actual: ciphertext.count)
        }
        let expected = ciphertext.count - HPKESuite.tagLength
        guard out.count == expected else {
            throw HPKEError.invalidLength(what: "AEAD output", expected: expected, actual: out.count)
        }
        var written: UInt64 = 0
        var scratch: UInt8 = 0
        let status = withUnsafeMutablePointer(to: &scratch) { scratchPointer in
            crypto_aead_chacha20poly1305_ietf_decrypt(
                out.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? scratchPointer, &written, nil,
                ciphertextBase.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
                aad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(aad.count),
                nonceBase.assumingMemoryBound(to: UInt8.self),
                keyBase.assumingMemoryBound(to: UInt8.self))
        }
        return status == 0 && written == UInt64(expected)
    }
}
