import Foundation
import SealedPushCore

/// `Specs/vectors/blob-v1.json` (`Specs/blob-v1.md` §9) as Codable values, with the plaintext rule and the edits
/// that turn a positive vector's blob into a negative one.
public struct BlobVectorFile: Codable, Sendable {
    /// A blob a conforming writer reproduces exactly and a conforming reader opens.
    public struct Positive: Codable, Sendable {
        public var name: String
        public var key: String
        public var salt: String
        public var payloadKey: String
        public var size: Int
        public var ciphertextSize: Int
        /// The whole blob in hex, for small vectors only.
        public var ciphertext: String?
        public var ciphertextSHA256: String

        public init(
            name: String, key: String, salt: String, payloadKey: String, size: Int, ciphertextSize: Int,
            ciphertext: String?, ciphertextSHA256: String
        ) {
            self.name = name
            self.key = key
            self.salt = salt
            self.payloadKey = payloadKey
            self.size = size
            self.ciphertextSize = ciphertextSize
            self.ciphertext = ciphertext
            self.ciphertextSHA256 = ciphertextSHA256
        }
    }

    /// One change to a blob (§9's table).
    public struct Edit: Codable, Sendable {
        public var op: String
        public var offset: Int?
        public var length: Int?
        public var mask: Int?
        public var hex: String?
        public var other: Int?
        public var chunk: Int?
        public var last: Bool?

        public static func truncate(_ length: Int) -> Edit { Edit(op: "truncate", length: length) }
        public static func delete(_ offset: Int, _ length: Int) -> Edit { Edit(op: "delete", offset: offset, length: length) }
        public static func xor(_ offset: Int, _ mask: Int) -> Edit { Edit(op: "xor", offset: offset, mask: mask) }
        public static func append(_ bytes: [UInt8]) -> Edit { Edit(op: "append", hex: Hex.encode(bytes)) }
        public static func appendCopy(_ offset: Int, _ length: Int) -> Edit {
            Edit(op: "appendCopy", offset: offset, length: length)
        }
        public static func swap(_ offset: Int, _ other: Int, _ length: Int) -> Edit {
            Edit(op: "swap", offset: offset, length: length, other: other)
        }
        public static func reseal(chunk: Int, last: Bool) -> Edit { Edit(op: "reseal", chunk: chunk, last: last) }

        public init(
            op: String, offset: Int? = nil, length: Int? = nil, mask: Int? = nil, hex: String? = nil,
            other: Int? = nil, chunk: Int? = nil, last: Bool? = nil
        ) {
            self.op = op
            self.offset = offset
            self.length = length
            self.mask = mask
            self.hex = hex
            self.other = other
            self.chunk = chunk
            self.last = last
        }
    }

    /// A damaged blob and the one error a reader must report.
    public struct Negative: Codable, Sendable {
        public var name: String
        public var base: String
        public var key: String
        public var size: Int
        public var maxSize: Int?
        public var edits: [Edit]
        public var expectedError: String

        public init(
            name: String, base: String, key: String, size: Int, maxSize: Int? = nil, edits: [Edit], expectedError: String
        ) {
            self.name = name
            self.base = base
            self.key = key
            self.size = size
            self.maxSize = maxSize
            self.edits = edits
            self.expectedError = expectedError
        }
    }

    /// A content's `attachments` array as JSON text and what a receiver makes of each element (§6):
    /// `"ok"` (the descriptor parses) or the error code the element is skipped with.
    public struct DescriptorCase: Codable, Sendable {
        public var name: String
        /// The JSON text of the `attachments` array (text, so numbers such as `1e300` or `1.0` stay as written).
        public var attachments: String
        /// One entry per element, in order.
        public var expected: [String]

        public init(name: String, attachments: String, expected: [String]) {
            self.name = name
            self.attachments = attachments
            self.expected = expected
        }
    }

    /// Seals plaintext `p_i` of chunk `i` with the given last flag under the base vector's payload key.
    public typealias Reseal = (_ base: Positive, _ chunk: Int, _ last: Bool, _ plaintext: [UInt8]) throws -> [UInt8]

    public var version: Int
    public var generator: String
    public var chunkSize: Int
    public var info: String
    public var plaintextRule: String
    public var positive: [Positive]
    public var negative: [Negative]
    /// Descriptor parsing cases (§6.1–6.3): size limits, name length in bytes, the attachment count.
    public var descriptors: [DescriptorCase]

    public init(generator: String, positive: [Positive], negative: [Negative], descriptors: [DescriptorCase] = []) {
        self.version = 1
        self.generator = generator
        self.chunkSize = BlobFormat.chunkSize
        self.info = String(decoding: BlobFormat.payloadKeyInfo, as: UTF8.self)
        self.plaintextRule = "byte i of the plaintext is i mod 251"
        self.positive = positive
        self.negative = negative
        self.descriptors = descriptors
    }

    /// The first `size` bytes of the plaintext rule: byte `i` is `i mod 251`.
    public static func plaintext(size: Int) -> [UInt8] {
        (0..<size).map { UInt8($0 % 251) }
    }

    /// The positive vector named `name`.
    public func positive(named name: String) -> Positive? { positive.first { $0.name == name } }

    /// Applies a negative vector's edits to its base's blob.
    ///
    /// - Parameters:
    ///   - negative: The negative vector.
    ///   - baseBlob: The base vector's whole blob.
    ///   - reseal: Seals one chunk under the base's payload key (each side with its own library).
    /// - Returns: The damaged blob.
    public func damagedBlob(_ negative: Negative, baseBlob: [UInt8], reseal: Reseal) throws -> [UInt8] {
        guard let base = positive(named: negative.base) else {
            throw SealedPushError(.invalidArgument, "negative vector \(negative.name) names an unknown base \(negative.base)")
        }
        var blob = baseBlob
        let plaintext = Self.plaintext(size: base.size)
        for edit in negative.edits {
            switch edit.op {
            case "truncate":
                blob.removeSubrange((edit.length ?? 0)...)
            case "delete":
                let start = edit.offset ?? 0
                blob.removeSubrange(start..<start + (edit.length ?? 0))
            case "xor":
                blob[edit.offset ?? 0] ^= UInt8(edit.mask ?? 0)
            case "append":
                blob += try Hex.decode(edit.hex ?? "")
            case "appendCopy":
                let start = edit.offset ?? 0
                blob += blob[start..<start + (edit.length ?? 0)]
            case "swap":
                let first = edit.offset ?? 0, second = edit.other ?? 0, length = edit.length ?? 0
                let a = Array(blob[first..<first + length]), b = Array(blob[second..<second + length])
                blob.replaceSubrange(first..<first + length, with: b)
                blob.replaceSubrange(second..<second + length, with: a)
            case "reseal":
                let index = edit.chunk ?? 0
                let length = BlobFormat.chunkPlaintextLength(index: index, plaintextSize: base.size)
                let start = BlobFormat.headerLength + index * (BlobFormat.chunkSize + BlobFormat.tagLength)
                let chunkPlaintext = Array(plaintext[index * BlobFormat.chunkSize..<index * BlobFormat.chunkSize + length])
                let sealed = try reseal(base, index, edit.last ?? false, chunkPlaintext)
                blob.replaceSubrange(start..<start + length + BlobFormat.tagLength, with: sealed)
            default:
                throw SealedPushError(.invalidArgument, "unknown edit \(edit.op) in \(negative.name)")
            }
        }
        return blob
    }

    /// The repository copy's path (`Specs/vectors/blob-v1.json`).
    public static var specPath: URL {
        EnvelopeVectorFile.repositoryRoot.appendingPathComponent("Specs/vectors/blob-v1.json")
    }

    /// The test copy's path in this module's sources (`Vectors/blob-v1.json`).
    public static var testCopyPath: URL {
        EnvelopeVectorFile.repositoryRoot.appendingPathComponent("Sources/SealedPushTestSupport/Vectors/blob-v1.json")
    }

    /// Loads the test copy from this module's bundle.
    public static func load() throws -> BlobVectorFile {
        guard let url = Bundle.module.url(forResource: "blob-v1", withExtension: "json", subdirectory: "Vectors")
            ?? Bundle.module.url(forResource: "blob-v1", withExtension: "json")
        else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Vectors/blob-v1.json"])
        }
        return try JSONDecoder().decode(BlobVectorFile.self, from: Data(contentsOf: url))
    }

    /// Encodes the file as the repository stores it: sorted keys, pretty-printed, `/` unescaped, final newline.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }
}
