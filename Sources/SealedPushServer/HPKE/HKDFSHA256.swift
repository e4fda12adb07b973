/// HKDF (RFC 5869) with SHA-256, built on ``HMACSHA256`` because libsodium 1.0.18 has no HKDF.
///
/// Inputs can be fed in pieces through closures, which is how the labeled variants of RFC 9180 avoid building
/// concatenated copies of secrets.
package enum HKDFSHA256 {
    /// `HashLen`: the length of a pseudorandom key.
    package static let hashLength = 32
    /// The longest output Expand can produce: 255 × HashLen.
    package static let maxOutputLength = 255 * 32

    /// HKDF-Extract(salt, IKM).
    ///
    /// - Parameters:
    ///   - salt: The salt; empty means HashLen zero bytes (HMAC pads the key with zeros either way).
    ///   - ikm: The input keying material.
    /// - Returns: The 32-byte pseudorandom key.
    package static func extract(salt: some RawBytes, ikm: some RawBytes) -> SecretBytes {
        extract(salt: salt) { $0.update(ikm) }
    }

    /// HKDF-Extract with the input keying material fed in pieces by `feedIKM`.
    static func extract(salt: some RawBytes, feedIKM: (inout HMACSHA256) -> Void) -> SecretBytes {
        let saltIsEmpty = salt.withUnsafeBytes { $0.isEmpty }
        var mac = saltIsEmpty ? HMACSHA256.emptyKey : HMACSHA256(key: salt)
        feedIKM(&mac)
        return mac.finalize()
    }

    /// HKDF-Expand(PRK, info, L).
    ///
    /// - Parameters:
    ///   - prk: The pseudorandom key (normally from ``extract(salt:ikm:)``).
    ///   - info: The context information.
    ///   - length: `L`, the output length, 0 ... 8,160 bytes.
    /// - Returns: `length` bytes of output keying material.
    /// - Throws: ``HPKEError/outputTooLong(requested:limit:)`` if `length` is over 255 × 32.
    package static func expand(prk: some RawBytes, info: some RawBytes, length: Int) throws -> SecretBytes {
        try expand(prk: prk, length: length) { $0.update(info) }
    }

    /// HKDF-Expand with the info fed in pieces by `feedInfo` (called once per output block).
    static func expand(
        prk: some RawBytes, length: Int, feedInfo: (inout HMACSHA256) -> Void
    ) throws -> SecretBytes {
        var keyed = HMACSHA256(key: prk)
        defer { keyed.wipe() }
        return try expand(keyedBy: keyed, length: length, feedInfo: feedInfo)
    }

    /// HKDF-Expand with the PRK given as a MAC keyed with it (nothing fed yet), so several expansions under one
    /// PRK key the MAC once. `keyed` is copied per output block; the caller wipes its own copy.
    static func expand(
        keyedBy keyed: HMACSHA256, length: Int, feedInfo: (inout HMACSHA256) -> Void
    ) throws -> SecretBytes {
        guard length >= 0, length <= maxOutputLength else {
            throw HPKEError.outputTooLong(requested: length, limit: maxOutputLength)
        }
        return SecretBytes(count: length) { out in
            // T(0) = empty; T(i) = HMAC(PRK, T(i-1) || info || i); OKM = first L bytes of T(1) || T(2) || ...
            var block = [UInt8](repeating: 0, count: hashLength)
            defer { Sodium.wipe(&block) }
            var produced = 0
            var counter: UInt8 = 1
            while produced < length {
                var mac = keyed
                if counter > 1 { mac.update(block) }
                feedInfo(&mac)
                mac.update(byte: counter)
                block.withUnsafeMutableBytes { mac.finalize(into: $0) }
                let take = min(hashLength, length - produced)
                block.withUnsafeBytes { from in
                    if let source = from.baseAddress, let target = out.baseAddress {
                        (target + produced).copyMemory(from: source, byteCount: take)
                    }
                }
                produced += take
                counter &+= 1
            }
        }
    }
}
