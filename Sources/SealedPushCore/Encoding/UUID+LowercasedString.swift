import Foundation

extension UUID {
    /// The RFC 9562 text form in lowercase (`8-4-4-4-12` hex digits), as the gateway's API, store and provider
    /// headers write ids: `uuidString.lowercased()` without its formatting through `printf` and a second string (the
    /// gateway writes three to five of these a send).
    public var lowercasedString: String {
        let bytes = uuid
        return withUnsafeBytes(of: bytes) { raw in
            String(unsafeUninitializedCapacity: 36) { text in
                var at = 0
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    text[at] = Hex.digits[Int(byte >> 4)]
                    text[at + 1] = Hex.digits[Int(byte & 0x0F)]
                    at += 2
                }
                return at
            }
        }
    }
}
