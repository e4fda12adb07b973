/// Where a blob is and how to read it: `url`, `key`, `size` (`Specs/blob-v1.md` §6.1).
///
/// The same shape is an attachment's blob and, on its own, a content reference for content too large for APNs
/// (§6.4). The key is secret: `description` and `dump` never show it.
public struct BlobReference: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The longest accepted URL, in bytes.
    public static let maxURLLength = 2_048
    /// The default cap of content fetched by reference (§6.4): 64 KiB.
    public static let defaultContentCap = 65_536

    /// The blob's `https://` (or `http://`) URL.
    public let url: String
    /// The 32-byte blob key.
    public let key: [UInt8]
    /// The plaintext size in bytes.
    public let size: Int

    /// Creates a reference, checking every rule of §6.1.
    ///
    /// - Parameters:
    ///   - url: An `https://` or `http://` URL of printable ASCII, at most 2,048 bytes, with a non-empty host.
    ///   - key: The 32-byte blob key.
    ///   - size: The plaintext size, 0 ... ``BlobFormat/maxPlaintextSize``.
    /// - Throws: `SealedPushError` `malformedAttachment` naming the rule.
    public init(url: String, key: [UInt8], size: Int) throws {
        try Self.checkURL(url)
        guard key.count == BlobFormat.keyLength else {
            throw SealedPushError(.malformedAttachment, "a blob key is 32 bytes, got \(key.count)")
        }
        guard size >= 0, size <= BlobFormat.maxPlaintextSize else {
            throw SealedPushError(.malformedAttachment, "a blob size must be 0...\(BlobFormat.maxPlaintextSize), got \(size)")
        }
        self.url = url
        self.key = key
        self.size = size
    }

    /// Parses the `url`, `key` and `size` members of a descriptor object; other members are ignored.
    ///
    /// - Parameters:
    ///   - value: The JSON object.
    ///   - maxSize: The cap for this use (for example an attachment kind's cap, or 64 KiB for content).
    /// - Returns: The reference.
    /// - Throws: `malformedAttachment` for a missing or mistyped member or a broken rule; `blobTooLarge` for an
    ///   integer size over `maxSize` or over ``BlobFormat/maxPlaintextSize`` (checked last: a reference with any
    ///   other defect is `malformedAttachment`, whatever its size — `Specs/blob-v1.md` §6.1).
    public init(parsing value: JSONValue, maxSize: Int = BlobFormat.maxPlaintextSize) throws {
        guard let members = value.objectValue else {
            throw SealedPushError(.malformedAttachment, "a blob reference must be a JSON object")
        }
        guard let url = members["url"]?.stringValue else {
            throw SealedPushError(.malformedAttachment, "a blob reference needs a \"url\" string")
        }
        guard let keyText = members["key"]?.stringValue else {
            throw SealedPushError(.malformedAttachment, "a blob reference needs a \"key\" string")
        }
        guard keyText.utf8.count == Base64URL.encodedLength(BlobFormat.keyLength),
            let key = try? Base64URL.decode(keyText), key.count == BlobFormat.keyLength
        else {
            throw SealedPushError(.malformedAttachment, "a blob reference's \"key\" must be 32 bytes of canonical base64url (43 characters)")
        }
        guard case .number(let number) = members["size"], number.isFinite, number == number.rounded(), number >= 0
        else {
            throw SealedPushError(.malformedAttachment, "a blob reference's \"size\" must be a non-negative integer")
        }
        try Self.checkURL(url)
        let cap = min(maxSize, BlobFormat.maxPlaintextSize)
        guard number <= Double(cap) else {
            let shown = number < 1e18 ? "\(Int(number))" : "\(number)"
            throw SealedPushError(.blobTooLarge, "the blob's size of \(shown) bytes is over the \(cap)-byte cap")
        }
        try self.init(url: url, key: key, size: Int(number))
    }

    /// The reference as JSON members: `url`, `key` (base64url), `size`.
    public var jsonMembers: JSONObject {
        ["url": .string(url), "key": .string(Base64URL.encode(key)), "size": .number(Double(size))]
    }

    /// The reference as a JSON object (a content reference, §6.4).
    public var jsonValue: JSONValue { .object(jsonMembers) }

    public var description: String { "BlobReference(url: \(url), size: \(size), key: <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["url": url, "size": size], displayStyle: .struct) }

    static func checkURL(_ url: String) throws {
        let bytes = Array(url.utf8)
        guard !bytes.isEmpty, bytes.count <= maxURLLength else {
            throw SealedPushError(.malformedAttachment, "a blob URL must be 1...\(maxURLLength) bytes, got \(bytes.count)")
        }
        guard bytes.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw SealedPushError(.malformedAttachment, "a blob URL must be printable ASCII without spaces")
        }
        let lowered = bytes.prefix(8).map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        let schemeLength: Int
        if lowered.starts(with: Array("https://".utf8)) {
            schemeLength = 8
        } else if lowered.starts(with: Array("http://".utf8)) {
            schemeLength = 7
        } else {
            throw SealedPushError(.malformedAttachment, "a blob URL must start with https:// or http://")
        }
        guard bytes.count > schemeLength, ![UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")].contains(bytes[schemeLength])
        else {
            throw SealedPushError(.malformedAttachment, "a blob URL must name a host")
        }
    }
}
