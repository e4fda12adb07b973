internal import CSodium

/// Streaming HMAC-SHA-256 over libsodium's `crypto_auth_hmacsha256_init/update/final`.
///
/// Inputs are fed piece by piece, so labeled HKDF inputs (label || secret) are never concatenated into a
/// temporary buffer that would need wiping. The state is wiped when the MAC is finalized.
///
/// A copy of a keyed MAC that nothing has been fed into yet starts a new MAC with the same key: that is how
/// several MACs under one key are run without keying each. Every copy holds the keyed state, so each must be
/// finalized or wiped.
struct HMACSHA256 {
    /// The output length in bytes.
    static let byteCount = 32

    private var state = crypto_auth_hmacsha256_state()

    /// A MAC keyed with the empty key (HKDF-Extract's default salt), keyed once: copies start from this state,
    /// which saves the two compressions of keying on every use. The empty key is not secret.
    static let emptyKey = HMACSHA256(key: [UInt8]())

    /// Starts a MAC keyed with `key` (any length; keys over 64 bytes are hashed as HMAC specifies).
    init(key: some RawBytes) {
        key.withUnsafeBytes { buffer in
            buffer.withNonNullBytes { pointer, count in
                _ = crypto_auth_hmacsha256_init(&state, pointer, count)
            }
        }
    }

    /// Feeds `bytes` into the MAC.
    mutating func update(_ bytes: some RawBytes) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Feeds the bytes of `buffer` into the MAC.
    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0, let base = buffer.baseAddress else { return }
        _ = crypto_auth_hmacsha256_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count))
    }

    /// Feeds the UTF-8 bytes of `text` into the MAC (no copy for a native string such as a literal label).
    mutating func update(utf8 text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Feeds one byte into the MAC.
    mutating func update(byte: UInt8) {
        var value = byte
        _ = crypto_auth_hmacsha256_update(&state, &value, 1)
    }

    /// Writes the 32-byte MAC to the start of `out` and wipes the state.
    ///
    /// - Parameter out: At least ``byteCount`` bytes.
    mutating func finalize(into out: UnsafeMutableRawBufferPointer) {
        guard out.count >= Self.byteCount, let base = out.baseAddress else { return }
        _ = crypto_auth_hmacsha256_final(&state, base.assumingMemoryBound(to: UInt8.self))
        wipe()
    }

    /// Finishes the MAC into a new ``SecretBytes``.
    mutating func finalize() -> SecretBytes {
        SecretBytes(count: Self.byteCount) { self.finalize(into: $0) }
    }

    /// Overwrites the state with zeros without producing a MAC.
    mutating func wipe() {
        withUnsafeMutableBytes(of: &state) { raw in
            if let pointer = raw.baseAddress { sodium_memzero(pointer, raw.count) }
        }
    }
}
