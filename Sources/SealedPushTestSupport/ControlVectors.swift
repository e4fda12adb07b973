import Foundation
import SealedPushCore

/// `Specs/vectors/control-v1.json` (`Specs/control-v1.md`) as Codable values: content cases for notification ids and
/// control messages, and receipts sealed with fixed keys.
public struct ControlVectorFile: Codable, Sendable {
    /// One content JSON text and what a receiver that knows control-v1 makes of it.
    public struct ContentCase: Codable, Sendable {
        public var name: String
        /// The content JSON as a sender might write it.
        public var json: String
        /// Its canonical form when valid; nil when a receiver refuses it (`malformedContent`).
        public var canonical: String?
        /// The control action when there is one (`remove`, `update`, `badge`).
        public var action: String?

        public init(name: String, json: String, canonical: String?, action: String?) {
            self.name = name
            self.json = json
            self.canonical = canonical
            self.action = action
        }
    }

    /// A receipt sealed by a device key to a server identity with a fixed ephemeral key.
    public struct Receipt: Codable, Sendable {
        public var name: String
        public var topic: String
        public var devicePrivateKey: String
        public var devicePublicKey: String
        public var serverPrivateKey: String
        public var serverPublicKey: String
        public var ephemeralPrivateKey: String
        public var receiptId: String
        public var issuedAt: UInt64
        public var expiresAt: UInt64
        /// The record's canonical JSON.
        public var recordJSON: String
        public var paddedPlaintext: String
        /// The receipt envelope, hex.
        public var receipt: String
        public var now: UInt64

        public init(
            name: String, topic: String, devicePrivateKey: String, devicePublicKey: String, serverPrivateKey: String,
            serverPublicKey: String, ephemeralPrivateKey: String, receiptId: String, issuedAt: UInt64,
            expiresAt: UInt64, recordJSON: String, paddedPlaintext: String, receipt: String, now: UInt64
        ) {
            self.name = name
            self.topic = topic
            self.devicePrivateKey = devicePrivateKey
            self.devicePublicKey = devicePublicKey
            self.serverPrivateKey = serverPrivateKey
            self.serverPublicKey = serverPublicKey
            self.ephemeralPrivateKey = ephemeralPrivateKey
            self.receiptId = receiptId
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
            self.recordJSON = recordJSON
            self.paddedPlaintext = paddedPlaintext
            self.receipt = receipt
            self.now = now
        }
    }

    /// A receipt the backend refuses, with the code `Specs/control-v1.md` §4 names.
    public struct ReceiptNegative: Codable, Sendable {
        public var name: String
        public var receipt: String
        public var topic: String
        /// The registered device public key (hex) the backend holds for the receipt's sender key id, if any.
        public var devicePublicKey: String?
        public var now: UInt64
        public var expectedError: String

        public init(name: String, receipt: String, topic: String, devicePublicKey: String?, now: UInt64,
                    expectedError: String) {
            self.name = name
            self.receipt = receipt
            self.topic = topic
            self.devicePublicKey = devicePublicKey
            self.now = now
            self.expectedError = expectedError
        }
    }

    public var description: String
    public var contentCases: [ContentCase]
    public var receipts: [Receipt]
    public var receiptNegatives: [ReceiptNegative]

    public init(description: String, contentCases: [ContentCase], receipts: [Receipt], receiptNegatives: [ReceiptNegative]) {
        self.description = description
        self.contentCases = contentCases
        self.receipts = receipts
        self.receiptNegatives = receiptNegatives
    }

    /// The path of the vector file in the repository.
    public static var defaultPath: URL {
        EnvelopeVectorFile.repositoryRoot.appendingPathComponent("Specs/vectors/control-v1.json")
    }

    /// Loads the vector file.
    public static func load(from url: URL = defaultPath) throws -> ControlVectorFile {
        try JSONDecoder().decode(ControlVectorFile.self, from: Data(contentsOf: url))
    }
}
