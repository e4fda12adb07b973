/// Base64url (RFC 4648 §5) without padding, with a strict decoder.
///
/// The decoder accepts only the canonical encoding: the alphabet `A–Z a–z 0–9 - _`, no `=`, no whitespace,
/// a length that is not 1 (mod 4), and zero unused bits in the last character.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        return table
    }()

    /// The length of the unpadded encoding of `byteCount` bytes: `floor((4n + 2) / 3)`.
    /// - Parameter byteCount: The number of input bytes.
    /// - Returns: The number of characters.
    public static func encodedLength(_ byteCount: Int) -> Int { (4 * byteCount + 2) / 3 }

    /// Encodes bytes as unpadded base64url.
    /// - Parameter bytes: The bytes to encode.
    /// - Returns: The encoded text.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity(encodedLength(input.count))
        var index = 0
        while index + 3 <= input.count {
            let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(alphabet[Int(value >> 6 & 63)])
            out.append(alphabet[Int(value & 63)])
            index += 3
        }
        let rest = input.count - index
        if rest == 1 {
            let value = UInt32(input[index]) << 16
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
        } else if rest == 2 {
            let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(alphabet[Int(value >> 6 & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes canonical unpadded base64url.
    /// - Parameter text: The encoded text.
    /// - Returns: The decoded bytes.
    /// - Throws: ``SealedPushError`` with code `badEncoding`, naming the offending position.
    public static func decode(_ text: String) throws -> [UInt8] {
        try decode(utf8: Array(text.utf8))
    }

    /// Decodes canonical unpadded base64url given as UTF-8 bytes.
    /// - Parameter chars: The encoded text's bytes.
    /// - Returns: The decoded bytes.
    /// - Throws: ``SealedPushError`` with code `badEncoding`.
    public static func decode(utf8 chars: [UInt8]) throws -> [UInt8] {
        if chars.count % 4 == 1 {
            throw SealedPushError(
                .badEncoding, "base64url text of \(chars.count) characters is impossible (length ≡ 1 mod 4)")
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for (position, char) in chars.enumerated() {
            let value = reverse[Int(char)]
            if value == 0xFF {
                let shown = char == UInt8(ascii: "=") ? "padding '='" : "byte 0x\(String(char, radix: 16))"
                throw SealedPushError(
                    .badEncoding, "base64url text has \(shown) at position \(position); only A-Z a-z 0-9 - _ allowed")
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        if accumulator != 0 {
            throw SealedPushError(.badEncoding, "base64url text is not canonical: its last character has unused bits set")
        }
        return out
    }
}
