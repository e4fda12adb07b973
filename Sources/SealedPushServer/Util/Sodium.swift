internal import CSodium

/// libsodium setup and small helpers shared by the server's primitives.
package enum Sodium {
    /// The result of the one `sodium_init()` call: Swift initializes a `static let` exactly once, thread-safely.
    private static let initResult: Int32 = sodium_init()

    /// Makes sure `sodium_init()` has run (it selects the fast implementations and seeds the random source).
    ///
    /// - Throws: ``HPKEError/sodiumUnavailable`` if libsodium could not initialize.
    static func ensureInitialized() throws {
        guard initResult >= 0 else { throw HPKEError.sodiumUnavailable }
    }

    /// Overwrites the array's storage with zeros (`sodium_memzero`), keeping its length.
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
        }
    }

    /// Fills `buffer` from libsodium's cryptographically secure random source.
    static func randomBytes(into buffer: UnsafeMutableRawBufferPointer) {
        _ = initResult  // randombytes_buf also works before sodium_init, but use the initialized source
        if let base = buffer.baseAddress, buffer.count > 0 { randombytes_buf(base, buffer.count) }
    }

    /// `count` random bytes from libsodium's cryptographically secure random source.
    static func randomBytes(count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randomBytes(into: $0) }
        return bytes
    }

    /// `crypto_hash_sha256` of the concatenation of `parts`.
    static func sha256(_ parts: [UInt8]...) -> [UInt8] {
        var state = crypto_hash_sha256_state()
        _ = crypto_hash_sha256_init(&state)
        for part in parts {
            part.withUnsafeBytes { buffer in
                _ = crypto_hash_sha256_update(
                    &state, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count))
            }
        }
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        digest.withUnsafeMutableBytes { out in
            guard let base = out.baseAddress else { return }
            _ = crypto_hash_sha256_final(&state, base.assumingMemoryBound(to: UInt8.self))
        }
        return digest
    }
}
