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

    /// Appends a number in canonical form (spec §4.1).
    ///
    /// - Zero (either sign) is `0`; other integers with magnitude below 2^53 are plain decimal (`-3`, `42`).
    /// - Every other value is written with the shortest digit string that round-trips the double, `d₁d₂…dₙ` with
    ///   decimal exponent `E` (the value is `d₁.d₂…dₙ × 10^E`): integers (magnitude ≥ 2^53) and values with
    ///   `E < -4` as `d₁[.d₂…dₙ]e±XX` (sign always written, at least two exponent digits: `1e-05`,
    ///   `9.007199254740992e+15`, `1e+300`); the rest in plain decimal (`0.5`, `0.0001`, `123.456`).
    ///
    /// A reader never sees an integer literal beyond ±(2^53 − 1) from this writer, so its output always parses.
    /// - Parameter value: A finite double.
    public mutating func number(_ value: Double) {
        bytes.append(contentsOf: Self.canonicalNumber(value).utf8)
    }

    /// The canonical text of a finite double (see ``number(_:)``).
    ///
    /// - Parameter value: A finite double.
    /// - Returns: Its canonical JSON number text.
    public static func canonicalNumber(_ value: Double) -> String {
        if value == 0 { return "0" }
        let integral = value == value.rounded(.towardZero)
        if integral, abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        let (digits, exponent) = shortestDigits(abs(value))
        let sign = value < 0 ? "-" : ""
        if integral || exponent < -4 {
            var text = sign + String(digits.first!)
            if digits.count > 1 { text += "." + String(digits.dropFirst()) }
            let magnitude = String(abs(exponent))
            return text + "e" + (exponent < 0 ? "-" : "+") + (magnitude.count < 2 ? "0" : "") + magnitude
        }
        if exponent < 0 {
            return sign + "0." + String(repeating: "0", count: -exponent - 1) + String(digits)
        }
        // Not an integer, so there are more digits than the integer part holds.
        let integerPart = digits.prefix(exponent + 1)
        let fraction = digits.dropFirst(exponent + 1)
        return sign + String(integerPart) + "." + String(fraction)
    }

    /// The shortest round-trip digits of a positive finite double and its decimal exponent, read from Swift's
    /// `description` (which prints the shortest digits that round-trip, in one of its two notations).
    private static func shortestDigits(_ value: Double) -> (digits: [Character], exponent: Int) {
        let text = value.description
        let parts = text.split(separator: "e", maxSplits: 1)
        let mantissa = parts[0]
        let shift = parts.count > 1 ? Int(parts[1])! : 0
        let halves = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let integerDigits = Array(halves[0])
        let fractionDigits = halves.count > 1 ? Array(halves[1]) : []
        var all = integerDigits + fractionDigits
        var exponent = integerDigits.count - 1 + shift
        while all.first == "0" {
            all.removeFirst()
            exponent -= 1
        }
        while all.last == "0" { all.removeLast() }
        return (all, exponent)
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
            for (position, member) in members.enumerated() {  // JSONObject keeps canonical (UTF-8) order
                if position > 0 { raw(",") }
                string(member.key)
                raw(":")
                self.value(member.value)
            }
            raw("}")
        }
    }
}
