import SealedPushCore

/// The name of a blob in a ``BlobStore``: 48 lowercase hexadecimal digits, 192 random bits, so a blob URL cannot
/// be guessed (`Specs/blob-v1.md` §7).
///
/// Names are checked before they reach a file system or an object store, so a name is never a path.
public struct BlobName: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number of random bytes in a fresh name.
    public static let randomByteCount = 24
    /// The length of a name in characters.
    public static let length = 2 * randomByteCount

    /// The name's text (48 lowercase hex digits).
    public let text: String

    /// Checks a name received from outside (a URL path, a directory listing).
    ///
    /// - Parameter text: The candidate name.
    /// - Throws: `SealedPushError` `invalidArgument` unless it is exactly 48 lowercase hexadecimal digits.
    public init(validating text: String) throws {
        guard Self.isValid(text) else {
            throw SealedPushError(.invalidArgument, "a blob name is \(Self.length) lowercase hexadecimal digits")
        }
        self.text = text
    }

    /// A fresh name from libsodium's cryptographically secure random source.
    public static func random() -> BlobName {
        BlobName(unchecked: Hex.encode(Sodium.randomBytes(count: randomByteCount)))
    }

    /// Whether `text` is a well-formed name.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == length
            && bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    private init(unchecked text: String) { self.text = text }

    public var description: String { text }

    public static func < (lhs: BlobName, rhs: BlobName) -> Bool { lhs.text < rhs.text }
}
