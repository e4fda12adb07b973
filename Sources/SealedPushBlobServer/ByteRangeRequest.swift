/// What a `Range` request header asks of a blob of a known size (RFC 9110 §14).
///
/// Only a single `bytes` range is served as `206 Partial Content`; several ranges are answered with the whole blob
/// (`200`), which RFC 9110 allows, and a header that does not parse is ignored.
enum ByteRangeRequest: Equatable {
    /// Send the whole blob (no `Range`, an unparsable one, another unit, or several ranges).
    case whole
    /// Send these bytes with `206` and `Content-Range`.
    case partial(Range<Int>)
    /// Answer `416` with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Interprets a `Range` header value.
    ///
    /// - Parameters:
    ///   - header: The header value, or `nil` if there is none.
    ///   - size: The blob's size in bytes.
    init(header: String?, size: Int) {
        guard let header else {
            self = .whole
            return
        }
        let trimmed = header.trimmingASCIIWhitespace()
        guard trimmed.utf8.count > 6, trimmed.prefix(6).lowercased() == "bytes=" else {
            self = .whole
            return
        }
        let specs = trimmed.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
        guard specs.count == 1 else {
            self = .whole
            return
        }
        let spec = specs[0].trimmingASCIIWhitespace()
        guard let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            // `-n`: the last n bytes.
            guard let suffix = Self.number(last) else {
                self = .whole
                return
            }
            guard suffix > 0, size > 0 else {
                self = .unsatisfiable
                return
            }
            self = .partial(max(0, size - suffix)..<size)
            return
        }
        guard let start = Self.number(first) else {
            self = .whole
            return
        }
        if last.isEmpty {
            // `a-`: from a to the end.
            self = start < size ? .partial(start..<size) : .unsatisfiable
            return
        }
        guard let end = Self.number(last), end >= start else {
            self = .whole  // `b < a` is invalid syntax (RFC 9110 §14.1.1): ignore the header.
            return
        }
        self = start < size ? .partial(start..<(min(end, size - 1) + 1)) : .unsatisfiable
    }

    /// A decimal number of at most 18 digits (anything longer cannot be a position in a blob).
    private static func number(_ text: Substring) -> Int? {
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int(text)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingASCIIWhitespace() -> String {
        let bytes = Array(utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
