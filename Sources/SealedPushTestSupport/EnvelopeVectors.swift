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

        public init(name: String, payload: String, topic: String, now: UInt64, expectedError: String) {
            self.name = name
            self.payload = payload
            self.topic = topic
            self.now = now
            self.expectedError = expectedError
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

    public init(
        generator: String, topic: String, serverPrivateKey: String, serverPublicKey: String, serverKeyId: String,
        devicePrivateKey: String, devicePublicKey: String, deviceKeyId: String, positive: [Positive],
        negative: [Negative]
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
