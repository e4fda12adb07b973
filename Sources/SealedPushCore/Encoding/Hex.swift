/// Lowercase hexadecimal, used for key ids, test vectors and diagnostics.
public enum Hex {
    static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Encodes bytes as lowercase hexadecimal.
    /// - Parameter bytes: The bytes to encode.
    /// - Returns: Two lowercase hex digits per byte.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hexadecimal (either case).
    /// - Parameter text: An even number of hex digits.
    /// - Returns: The bytes.
    /// - Throws: ``SealedPushError`` with code `invalidArgument` if the text is not even-length hex.
    public static func decode(_ text: String) throws -> [UInt8] {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else {
            throw SealedPushError(.invalidArgument, "hex text has an odd number of digits (\(chars.count))")
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = nibble(chars[index]), let low = nibble(chars[index + 1]) else {
                throw SealedPushError(.invalidArgument, "hex text has a non-hex character near position \(index)")
            }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
