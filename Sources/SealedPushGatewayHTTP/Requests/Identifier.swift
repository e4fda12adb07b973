/// The contract's `Identifier`: 1 to 128 characters of `A-Z a-z 0-9 . _ ~ -` (app and device ids).
public enum Identifier {
    /// The longest identifier.
    public static let maxLength = 128

    /// Whether `text` is an identifier.
    public static func isValid(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= maxLength else { return false }
        return utf8.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
                || byte == UInt8(ascii: "-")
        }
    }
}
