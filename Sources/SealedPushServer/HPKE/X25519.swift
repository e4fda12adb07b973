internal import CCurve25519Map
internal import CSodium

/// X25519 (RFC 7748) on libsodium's `crypto_scalarmult_curve25519`.
package enum X25519 {
    /// The length of private keys, public keys and shared values.
    package static let keyLength = 32

    /// A new private key: 32 bytes from libsodium's secure random source (clamping happens in the scalar
    /// multiplication, as RFC 7748 specifies).
    ///
    /// - Throws: ``HPKEError/sodiumUnavailable`` if libsodium cannot initialize.
    package static func generatePrivateKey() throws -> SecretBytes {
        try Sodium.ensureInitialized()
        return SecretBytes(count: keyLength) { Sodium.randomBytes(into: $0) }
    }

    /// The public key X25519(sk, 9).
    ///
    /// Computed as libsodium 1.0.18's X25519 implementations can be combined fastest: the fixed-base Edwards
    /// multiplication `crypto_scalarmult_ed25519_base` (a precomputed table, constant time in `sk`; it clamps
    /// `sk` exactly as RFC 7748 does) followed by the birational map u = (1 + y) / (1 − y) on the resulting
    /// point, which is public. That is about twice as fast as `crypto_scalarmult_curve25519_base`, a Montgomery
    /// ladder, and gives the same bytes (BoringSSL and OpenSSL derive X25519 public keys the same way). The
    /// ladder remains the fallback for the inputs libsodium's Edwards route refuses (an all-zero `sk`).
    ///
    /// - Parameter privateKey: 32 bytes.
    /// - Returns: The 32-byte public key.
    /// - Throws: ``HPKEError/invalidLength(what:expected:actual:)`` for a private key that is not 32 bytes,
    ///   ``HPKEError/zeroSharedSecret`` if the result is all zeros.
    package static func publicKey(privateKey: some RawBytes) throws -> [UInt8] {
        try Sodium.ensureInitialized()
        var result = [UInt8](repeating: 0, count: keyLength)
        let status: Int32 = try privateKey.withUnsafeBytes { (sk) throws -> Int32 in
            guard sk.count == keyLength, let skBase = sk.baseAddress else {
                throw HPKEError.invalidLength(what: "X25519 private key", expected: keyLength, actual: sk.count)
            }
            let scalar = skBase.assumingMemoryBound(to: UInt8.self)
            return result.withUnsafeMutableBytes { out -> Int32 in
                guard let outBase = out.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return -1 }
                // libsodium writes the clamped scalar into its output buffer before the point replaces it, so
                // the Edwards point goes through a local buffer that is wiped afterwards.
                var edwards = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
                defer { withUnsafeMutableBytes(of: &edwards) { sodium_memzero($0.baseAddress, $0.count) } }
                let viaEdwards = withUnsafeMutableBytes(of: &edwards) { point -> Int32 in
                    let pointBase = point.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    guard crypto_scalarmult_ed25519_base(pointBase, scalar) == 0 else { return -1 }
                    return sealedpush_x25519_u_from_ed25519(outBase, pointBase)
                }
                if viaEdwards == 0 { return 0 }
                return crypto_scalarmult_curve25519_base(outBase, scalar)
            }
        }
        guard status == 0, result.contains(where: { $0 != 0 }) else { throw HPKEError.zeroSharedSecret }
        return result
    }

    /// The shared value X25519(sk, pk).
    ///
    /// - Parameters:
    ///   - privateKey: 32 bytes.
    ///   - publicKey: 32 bytes.
    /// - Returns: The 32-byte shared value, wiped when released.
    /// - Throws: ``HPKEError/zeroSharedSecret`` if the result is all zeros (libsodium returns -1: `publicKey` is
    ///   a low-order point); ``HPKEError/invalidLength(what:expected:actual:)`` for a key of the wrong length.
    package static func sharedSecret(
        privateKey: some RawBytes, publicKey: some RawBytes
    ) throws -> SecretBytes {
        try Sodium.ensureInitialized()
        var status: Int32 = 0
        let shared = try SecretBytes(count: keyLength) { (out) throws in
            try privateKey.withUnsafeBytes { (sk) throws in
                try publicKey.withUnsafeBytes { (pk) throws in
                    guard sk.count == keyLength, let skBase = sk.baseAddress else {
                        throw HPKEError.invalidLength(
                            what: "X25519 private key", expected: keyLength, actual: sk.count)
                    }
                    guard pk.count == keyLength, let pkBase = pk.baseAddress else {
                        throw HPKEError.invalidLength(
                            what: "X25519 public key", expected: keyLength, actual: pk.count)
                    }
                    guard let outBase = out.baseAddress else { return }
                    status = crypto_scalarmult_curve25519(
                        outBase.assumingMemoryBound(to: UInt8.self),
                        skBase.assumingMemoryBound(to: UInt8.self),
                        pkBase.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard status == 0 else { throw HPKEError.zeroSharedSecret }
        return shared
    }
}
