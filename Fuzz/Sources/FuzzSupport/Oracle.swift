/// Independent, spec-derived predicates the fuzz targets compare the implementation against. Written from
/// `Specs/envelope-v1.md` alone, without calling SealedPush code, so a disagreement is a real finding.
public enum Oracle {
    /// The base64url alphabet of RFC 4648 §5.
    public static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The 6-bit value of a base64url character, or `nil`.
    public static func value(of char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): char - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): char - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// Spec §6: canonical unpadded base64url (alphabet only, length not 1 mod 4, unused trailing bits zero).
    public static func isCanonicalBase64URL(_ chars: some Collection<UInt8>) -> Bool {
        guard chars.count % 4 != 1 else { return false }
        var last: UInt8 = 0
        for char in chars {
            guard let value = value(of: char) else { return false }
            last = value
        }
        switch chars.count % 4 {
        case 2: return last & 0x0F == 0   // 12 bits carry 8
        case 3: return last & 0x03 == 0   // 18 bits carry 16
        default: return true
        }
    }

    /// Spec §8 steps 4–7 on raw envelope bytes: the error code name the first failing step must report, or `nil`.
    public static func envelopeError(_ bytes: [UInt8]) -> String? {
        if bytes.count < 82 + 16 + 128 { return "truncated" }
        if bytes.count > 82 + 16 + 4096 { return "malformedEnvelope" }
        if bytes[0] != 0x01 { return "unsupportedVersion" }
        if bytes[1] != 0x01 { return "unsupportedSuite" }
        let issuedAt = bigEndian(bytes[34..<42])
        let expiresAt = bigEndian(bytes[42..<50])
        if issuedAt > expiresAt || expiresAt - issuedAt > 2_419_200 { return "malformedEnvelope" }
        return nil
    }

    /// A big-endian unsigned integer.
    public static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Spec §5: the content if the padded plaintext is well formed, else `nil`.
    public static func unpad(_ padded: [UInt8]) -> [UInt8]? {
        guard padded.count >= 2 else { return nil }
        let length = Int(padded[0]) * 256 + Int(padded[1])
        guard 2 + length <= padded.count else { return nil }
        for byte in padded[(2 + length)...] where byte != 0 { return nil }
        return Array(padded[2..<(2 + length)])
    }

    /// Spec §7: whether `chars` is exactly `prefix` followed by 43 canonical base64url characters.
    public static func isKeyText(_ chars: [UInt8], prefix: String) -> Bool {
        let prefixBytes = Array(prefix.utf8)
        guard chars.count == prefixBytes.count + 43, Array(chars.prefix(prefixBytes.count)) == prefixBytes else {
            return false
        }
        return isCanonicalBase64URL(chars.dropFirst(prefixBytes.count))
    }

    /// Spec §7: whether 32 key bytes, read little-endian, are below p = 2^255 − 19 (a canonical u-coordinate),
    /// compared as numbers from the top byte down.
    public static func isCanonicalPublicKey(_ raw: [UInt8]) -> Bool {
        let p: [UInt8] = [0xED] + [UInt8](repeating: 0xFF, count: 30) + [0x7F]
        for index in stride(from: 31, through: 0, by: -1) where raw[index] != p[index] {
            return raw[index] < p[index]
        }
        return false  // equal to p
    }
}

extension Oracle {
    /// Decodes base64url text already known to be canonical (see ``isCanonicalBase64URL(_:)``).
    public static func decodeBase64URL(_ chars: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        var accumulator: UInt32 = 0
        var bits = 0
        for char in chars {
            accumulator = accumulator << 6 | UInt32(value(of: char) ?? 0)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return out
    }
}
