/// A strict, bounded JSON parser (RFC 8259, with the I-JSON number rules of RFC 7493 §2.2).
///
/// Unlike a permissive parser it rejects what an attacker could use to confuse two implementations: invalid UTF-8,
/// a byte order mark, lone surrogates (raw or escaped), duplicated member names (compared by code points, so NFC
/// and NFD spellings are two names), nesting deeper than a limit, numbers that overflow a double, integers beyond
/// ±(2^53 − 1) (they cannot be carried exactly), and anything after the value. Work is O(n log n) in the input and
/// recursion is bounded by `maxDepth`.
///
/// Error messages name the byte offset and a category only: the parser also reads decrypted content and key ring
/// files, so nothing of the input is ever echoed.
public struct JSONParser {
    private let bytes: [UInt8]
    private let maxDepth: Int
    private let code: SealedPushError.Code
    private var index = 0

    /// Parses one JSON text.
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - maxDepth: The deepest nesting of arrays and objects accepted (the top level counts as 1).
    ///   - code: The error code thrown on failure (for example `malformedPayload` or `malformedContent`).
    /// - Returns: The value.
    /// - Throws: ``SealedPushError`` with `code`, naming the byte offset and the kind of problem (never input text).
    public static func parse(
        _ bytes: [UInt8], maxDepth: Int = 32, errorCode code: SealedPushError.Code = .malformedContent
    ) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth, code: code)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.fail("unexpected data after the JSON value") }
        return value
    }

    private init(bytes: [UInt8], maxDepth: Int, code: SealedPushError.Code) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.code = code
    }

    private func fail(_ what: String) -> SealedPushError {
        SealedPushError(code, "invalid JSON at byte \(index): \(what)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw fail("unexpected character (not the start of a JSON value)")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count - index >= expected.count, bytes[index..<index + expected.count].elementsEqual(expected)
        else { throw fail("invalid literal") }
        index += expected.count
    }

    private mutating func parseObject(depth: Int) throws -> JSONValue {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth) levels") }
        index += 1
        var members: [(key: String, value: JSONValue, position: Int)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject())
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let position = index
            let name = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append((name, value, position))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input in an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                switch JSONObject.build(members) {
                case .success(let object): return .object(object)
                case .failure(let duplicate):
                    throw SealedPushError(code, "invalid JSON at byte \(duplicate.position): a duplicated member name")
                }
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws -> JSONValue {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input in an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a number needs digits") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fail("a number may not have leading zeros") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var integer = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integer = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a fraction needs digits") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integer = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("an exponent needs digits") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // Any length (RFC 8259 sets none, and the envelope spec says receivers accept any valid JSON): the input's
        // own limit bounds it, and `Double(_:)` rounds correctly in time linear in the digits.
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw fail("a number out of the range of a double") }
        // I-JSON (RFC 7493 §2.2): an integer literal beyond ±(2^53 − 1) would be rounded silently
        // (9007199254740993 reads as 9007199254740992); refuse it so no two parties see different values.
        guard !integer || abs(value) <= Self.maxExactInteger else {
            throw fail("an integer beyond ±(2^53 − 1), which cannot be carried exactly (send it as a string)")
        }
        return value
    }

    /// 2^53 − 1, the largest integer that every binary64 reader holds exactly along with its neighbours.
    static let maxExactInteger: Double = 9_007_199_254_740_991

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws -> String {
        index += 1  // opening quote
        // Collect validated UTF-8 and build the String once: runs of plain ASCII are copied in bulk (appending
        // scalar by scalar to a String dominated the cost of opening a notification).
        var utf8 = [UInt8]()
        while true {
            let runStart = index
            while index < bytes.count, bytes[index] >= 0x20, bytes[index] < 0x80,
                bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\")
            {
                index += 1
            }
            if index > runStart { utf8.append(contentsOf: bytes[runStart..<index]) }
            guard index < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw fail("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): UTF8.encode(try parseUnicodeEscape()) { utf8.append($0) }
                default: throw fail("an invalid escape sequence")
                }
            case 0x00..<0x20:
                throw fail("unescaped control character in a string")
            default:
                // A multi-byte sequence: validated strictly, then copied as is.
                let start = index
                _ = try decodeUTF8Scalar()
                utf8.append(contentsOf: bytes[start..<index])
            }
        }
    }

    private mutating func readHex4() throws -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let char = bytes[index]
            let digit: UInt32
            switch char {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(char - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(char - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(char - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit in a \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseUnicodeEscape() throws -> Unicode.Scalar {
        let first = try readHex4()
        if (0xD800...0xDBFF).contains(first) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw fail("a high surrogate without its low surrogate") }
            index += 2
            let second = try readHex4()
            guard (0xDC00...0xDFFF).contains(second) else { throw fail("a high surrogate without its low surrogate") }
            let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw fail("invalid surrogate pair") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw fail("a lone low surrogate") }
        return scalar
    }

    /// Decodes one multi-byte UTF-8 sequence strictly (no overlongs, no surrogates, ≤ U+10FFFF).
    private mutating func decodeUTF8Scalar() throws -> Unicode.Scalar {
        let lead = bytes[index]
        let length: Int
        var value: UInt32
        var minimum: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; value = UInt32(lead & 0x1F); minimum = 0x80
        case 0xE0...0xEF: length = 3; value = UInt32(lead & 0x0F); minimum = 0x800
        case 0xF0...0xF4: length = 4; value = UInt32(lead & 0x07); minimum = 0x10000
        default: throw fail("invalid UTF-8")
        }
        guard bytes.count - index >= length else { throw fail("truncated UTF-8 sequence") }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            guard byte & 0xC0 == 0x80 else { throw fail("invalid UTF-8") }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        minimum = max(minimum, 0)
        guard value >= minimum, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value),
            let scalar = Unicode.Scalar(value)
        else { throw fail("invalid UTF-8 (overlong, surrogate or out of range)") }
        index += length
        return scalar
    }
}
