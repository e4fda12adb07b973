import Foundation
import SealedPushCore

/// `Specs/vectors/envelope-v1.json` (spec §11) as Codable values.
public struct EnvelopeVectorFile: Codable, Sendable {
    /// One positive vector: every input and the exact outputs.
    public struct Positive: Codable, Sendable {
        public var name: String
        public var content: JSONValue
        public var contentJSON: String
        public var placeholder: Placeholder
        public var ephemeralPrivateKey: String
        public var messageId: String
        public var issuedAt: UInt64
        public var expiresAt: UInt64
        public var paddedPlaintext: String
        public var envelope: String
        public var payload: String
        public var now: UInt64

        public init(
            name: String, content: JSONValue, contentJSON: String, placeholder: Placeholder,
            ephemeralPrivateKey: String, messageId: String, issuedAt: UInt64, expiresAt: UInt64,
            paddedPlaintext: String, envelope: String, payload: String, now: UInt64
        ) {
            self.name = name
            self.content = content
            self.contentJSON = contentJSON
            self.placeholder = placeholder
            self.ephemeralPrivateKey = ephemeralPrivateKey
            self.messageId = messageId
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
            self.paddedPlaintext = paddedPlaintext
            self.envelope = envelope
            self.payload = payload
            self.now = now
        }
    }

    /// One negative vector: a payload and the single error its receiver must report.
    public struct Negative: Codable, Sendable {
        public var name: String
        public var payload: String
        public var topic: String
        public var now: UInt64
        public var expectedError: String
        /// When true the body is handed over already parsed (as `userInfo` is), so step 1 does not apply.
        public var parsedBody: Bool?

        public init(
            name: String, payload: String, topic: String, now: UInt64, expectedError: String, parsedBody: Bool? = nil
        ) {
            self.name = name
            self.payload = payload
            self.topic = topic
            self.now = now
            self.expectedError = expectedError
            self.parsedBody = parsedBody
        }
    }

    /// A body a receiver must open although no conforming sender emits it byte for byte (spec §11).
    public struct Accepted: Codable, Sendable {
        public var name: String
        public var payload: String
        public var now: UInt64
        /// The canonical form (spec §4.1) of the content the receiver must produce.
        public var contentJSON: String

        public init(name: String, payload: String, now: UInt64, contentJSON: String) {
            self.name = name
            self.payload = payload
            self.now = now
            self.contentJSON = contentJSON
        }
    }

    /// A double and its canonical JSON text (spec §4.1).
    public struct CanonicalNumber: Codable, Sendable {
        /// The IEEE 754 binary64 bit pattern, 16 hex digits.
        public var bits: String
        public var text: String

        public init(bits: String, text: String) {
            self.bits = bits
            self.text = text
        }
    }

    /// A public key text every parser must reject with `invalidKey` (spec §7).
    public struct InvalidPublicKey: Codable, Sendable {
        public var name: String
        public var text: String

        public init(name: String, text: String) {
            self.name = name
            self.text = text
        }
    }

    public var version: Int
    public var generator: String
    public var topic: String
    public var serverPrivateKey: String
    public var serverPublicKey: String
    public var serverKeyId: String
    public var devicePrivateKey: String
    public var devicePublicKey: String
    public var deviceKeyId: String
    public var positive: [Positive]
    public var negative: [Negative]
    public var accepted: [Accepted]
    public var canonicalNumbers: [CanonicalNumber]
    public var invalidPublicKeys: [InvalidPublicKey]

    public init(
        generator: String, topic: String, serverPrivateKey: String, serverPublicKey: String, serverKeyId: String,
        devicePrivateKey: String, devicePublicKey: String, deviceKeyId: String, positive: [Positive],
        negative: [Negative], accepted: [Accepted], canonicalNumbers: [CanonicalNumber],
        invalidPublicKeys: [InvalidPublicKey]
    ) {
        self.version = 1
        self.generator = generator
        self.topic = topic
        self.serverPrivateKey = serverPrivateKey
        self.serverPublicKey = serverPublicKey
        self.serverKeyId = serverKeyId
        self.devicePrivateKey = devicePrivateKey
        self.devicePublicKey = devicePublicKey
        self.deviceKeyId = deviceKeyId
        self.positive = positive
        self.negative = negative
        self.accepted = accepted
        self.canonicalNumbers = canonicalNumbers
        self.invalidPublicKeys = invalidPublicKeys
    }

    /// The repository root, found from this source file's location (tests run from a checkout).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The path of the vector file in the repository.
    public static var defaultPath: URL { repositoryRoot.appendingPathComponent("Specs/vectors/envelope-v1.json") }

    /// Loads the vector file.
    /// - Parameter url: Its location; `Specs/vectors/envelope-v1.json` by default.
    /// - Returns: The decoded vectors.
    public static func load(from url: URL = defaultPath) throws -> EnvelopeVectorFile {
        try JSONDecoder().decode(EnvelopeVectorFile.self, from: Data(contentsOf: url))
    }

    /// Encodes the file as the repository stores it: sorted keys, pretty-printed, `/` unescaped.
    /// - Returns: UTF-8 JSON with a final newline.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }
}
