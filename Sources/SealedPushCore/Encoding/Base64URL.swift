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
        let remainder = chars.count % 4
        if remainder == 1 {
            throw SealedPushError(
                .badEncoding, "base64url text of \(chars.count) characters is impossible (length ≡ 1 mod 4)")
        }
        // Whole quads first (4 characters → 3 bytes) into an exactly sized buffer, then the 2- or 3-character tail;
        // an invalid character stops at its quad, so the first one in the text is the one reported.
        let outputCount = chars.count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var out = [UInt8](repeating: 0, count: outputCount)
        var failure: SealedPushError?
        reverse.withUnsafeBufferPointer { table in
            chars.withUnsafeBufferPointer { source in
                out.withUnsafeMutableBufferPointer { destination in
                    func invalid(from start: Int) -> SealedPushError {
                        var position = start
                        while position < source.count, table[Int(source[position])] != 0xFF { position += 1 }
                        let char = source[position]
                        let shown = char == UInt8(ascii: "=") ? "padding '='" : "byte 0x\(String(char, radix: 16))"
                        return SealedPushError(
                            .badEncoding,
                            "base64url text has \(shown) at position \(position); only A-Z a-z 0-9 - _ allowed")
                    }
                    var input = 0
                    var output = 0
                    let whole = source.count - remainder
                    while input < whole {
                        let a = table[Int(source[input])], b = table[Int(source[input + 1])]
                        let c = table[Int(source[input + 2])], d = table[Int(source[input + 3])]
                        guard (a | b | c | d) & 0x80 == 0 else {
                            failure = invalid(from: input)
                            return
                        }
                        let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        destination[output] = UInt8(truncatingIfNeeded: value >> 16)
                        destination[output + 1] = UInt8(truncatingIfNeeded: value >> 8)
                        destination[output + 2] = UInt8(truncatingIfNeeded: value)
                        input += 4
                        output += 3
                    }
                    guard remainder > 0 else { return }
                    let a = table[Int(source[input])], b = table[Int(source[input + 1])]
                    let c = remainder == 3 ? table[Int(source[input + 2])] : 0
                    guard (a | b | c) & 0x80 == 0 else {
                        failure = invalid(from: input)
                        return
                    }
                    destination[output] = a << 2 | b >> 4
                    let unusedBitsSet: Bool
                    if remainder == 3 {
                        destination[output + 1] = (b & 0x0F) << 4 | c >> 2
                        unusedBitsSet = c & 0x03 != 0
                    } else {
                        unusedBitsSet = b & 0x0F != 0
                    }
                    if unusedBitsSet {
                        failure = SealedPushError(
                            .badEncoding, "base64url text is not canonical: its last character has unused bits set")
                    }
                }
            }
        }
        if let failure { throw failure }
        return out
    }
}
