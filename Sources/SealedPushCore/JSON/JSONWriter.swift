/// Writes JSON in SealedPush's canonical form (spec §4.1): no whitespace, minimal escaping, raw UTF-8,
/// object members sorted by the bytes of their UTF-8 names.
public struct JSONWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// Creates an empty writer.
    public init() {}

    /// Appends raw, already-valid JSON text.
    /// - Parameter text: The text to append verbatim.
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends a JSON string literal with canonical escaping.
    /// - Parameter value: The string.
    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends a number: an integer in plain decimal when it is one exactly (|x| < 2^53), otherwise Swift's
    /// shortest round-trip form (`0.5`, `1e-05`, `1e+20`).
    /// - Parameter value: A finite double.
    public mutating func number(_ value: Double) {
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            bytes.append(contentsOf: String(Int64(value)).utf8)
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
    }

    /// Appends any JSON value in canonical form.
    /// - Parameter value: The value.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): if flag { raw("true") } else { raw("false") }
        case .number(let number): self.number(number)
        case .string(let text): string(text)
        case .array(let elements):
            raw("[")
            for (position, element) in elements.enumerated() {
                if position > 0 { raw(",") }
                self.value(element)
            }
            raw("]")
        case .object(let members):
            raw("{")
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (position, member) in sorted.enumerated() {
                if position > 0 { raw(",") }
                string(member.key)
                raw(":")
                self.value(member.value)
            }
            raw("}")
        }
    }
}
