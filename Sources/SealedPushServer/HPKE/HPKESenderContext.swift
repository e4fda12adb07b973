internal import CSodium

/// An RFC 9180 sender context (`ContextS`): the AEAD key, base nonce, optional exporter secret and the sequence
/// number. Its secrets are ``SecretBytes`` and are wiped when the context is released.
package struct HPKESenderContext: Sendable {
    /// The AEAD key (`Nk` = 32 bytes).
    package let key: SecretBytes
    /// The base nonce (`Nn` = 12 bytes).
    package let baseNonce: SecretBytes
    /// The exporter secret, when the key schedule was asked for it.
    package let exporterSecret: SecretBytes?
    /// The sequence number of the next `Seal`.
    package private(set) var sequenceNumber: UInt64 = 0

    init(key: SecretBytes, baseNonce: SecretBytes, exporterSecret: SecretBytes?) {
        self.key = key
        self.baseNonce = baseNonce
        self.exporterSecret = exporterSecret
    }

    /// `Seal(aad, pt)`: encrypts with nonce `base_nonce XOR I2OSP(seq, Nn)` and increments the sequence number.
    ///
    /// - Parameters:
    ///   - aad: The associated data.
    ///   - plaintext: The plaintext.
    /// - Returns: `ciphertext || tag` (`plaintext.count + 16` bytes).
    /// - Throws: ``HPKEError/messageLimitReached`` when the sequence number is exhausted.
    package mutating func seal(aad: some RawBytes, plaintext: some RawBytes) throws -> [UInt8] {
        let count = plaintext.withUnsafeBytes { $0.count } + HPKESuite.tagLength
        var output = [UInt8](repeating: 0, count: count)
        try output.withUnsafeMutableBytes { out in
            try aad.withUnsafeBytes { aadView in
                try plaintext.withUnsafeBytes { ptView in
                    try seal(aad: aadView, plaintext: ptView, into: out)
                }
            }
        }
        return output
    }

    /// `Seal(aad, pt)` writing `ciphertext || tag` into `out`, which must be `plaintext.count + 16` bytes.
    ///
    /// - Parameters:
    ///   - aad: The associated data.
    ///   - plaintext: The plaintext.
    ///   - out: The destination.
    /// - Throws: ``HPKEError/messageLimitReached`` when the sequence number is exhausted, ``HPKEError`` for a
    ///   wrong output length.
    package mutating func seal(
        aad: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) throws {
        guard sequenceNumber < UInt64.max else { throw HPKEError.messageLimitReached }
        var nonce = computeNonce()
        defer { Sodium.wipe(&nonce) }
        try key.withUnsafeBytes { keyView in
            try nonce.withUnsafeBytes { nonceView in
                try ChaCha20Poly1305.seal(key: keyView, nonce: nonceView, aad: aad, plaintext: plaintext, into: out)
            }
        }
        sequenceNumber += 1
    }

    /// `base_nonce XOR I2OSP(seq, Nn)`.
    private func computeNonce() -> [UInt8] {
        var nonce = baseNonce.bytes
        var seq = sequenceNumber
        var index = nonce.count - 1
        while seq != 0, index >= 0 {
            nonce[index] ^= UInt8(truncatingIfNeeded: seq)
            seq >>= 8
            index -= 1
        }
        return nonce
    }

    /// `Export(exporter_context, L) = LabeledExpand(exporter_secret, "sec", exporter_context, L)`.
    ///
    /// - Parameters:
    ///   - exporterContext: The exporter context.
    ///   - length: `L`.
    /// - Returns: The exported secret, or `nil` if the context was created without an exporter secret.
    /// - Throws: ``HPKEError/outputTooLong(requested:limit:)`` for an `L` out of range.
    package func export(exporterContext: [UInt8], length: Int) throws -> SecretBytes? {
        guard let exporterSecret else { return nil }
        return try HPKESuite.hpke.labeledExpand(
            prk: exporterSecret, label: "sec", info: exporterContext, length: length)
    }
}
