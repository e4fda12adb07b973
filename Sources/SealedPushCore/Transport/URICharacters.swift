/// RFC 3986's character classes (§2), byte by byte: what URI parts — a proxy URL's user and host, a request's `Host`
/// — are checked against.
package enum URICharacters {
    /// `unreserved`: letters, digits, `-`, `.`, `_`, `~`.
    /// - Parameter byte: A byte of the text.
    /// - Returns: Whether it is unreserved.
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// `sub-delims`: `! $ & ' ( ) * + , ; =`.
    /// - Parameter byte: A byte of the text.
    /// - Returns: Whether it is a sub-delimiter.
    package static func isSubDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="):
            true
        default: false
        }
    }

    /// The value of a `HEXDIG` (either case), as a percent-encoding's digits have.
    /// - Parameter byte: A byte of the text.
    /// - Returns: 0–15, or nil when it is not a hex digit.
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
