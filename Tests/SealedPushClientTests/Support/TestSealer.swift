import Crypto
import Foundation
import SealedPushClient
import SealedPushCore

/// TEST-ONLY sender built directly on swift-crypto's `HPKE.Sender` (mode_auth), independent of the client's opening
/// code: it computes key ids and the HPKE `info` itself from the spec text. The real sender is the server's
/// libsodium implementation; the lead's conformance suite checks the two against each other.
struct TestSealer {
    /// "SealedPush key id v1" || 0x00 (spec §2.2), spelled out here rather than taken from Core.
    static let keyIDLabel: [UInt8] = Array("SealedPush key id v1".utf8) + [0]
    /// "SealedPush envelope v1" || 0x00 (spec §2.1).
    static let infoLabel: [UInt8] = Array("SealedPush envelope v1".utf8) + [0]

    let serverKey: Curve25519.KeyAgreement.PrivateKey
    let topic: String

    init(serverKey: Curve25519.KeyAgreement.PrivateKey = .init(), topic: String = "com.example.sealedpush") {
        self.serverKey = serverKey
        self.topic = topic
    }

    var serverPublicKey: [UInt8] { Array(serverKey.publicKey.rawRepresentation) }

    static func keyID(_ publicKey: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: keyIDLabel + publicKey).prefix(8))
    }

    static func randomMessageID() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Seals `contentJSON` for `devicePublicKey` and returns the binary envelope.
    func sealEnvelope(
        contentJSON: String,
        to devicePublicKey: [UInt8],
        issuedAt: UInt64,
        expiresAt: UInt64,
        messageID: [UInt8] = TestSealer.randomMessageID(),
        topic overrideTopic: String? = nil,
        paddedOverride: [UInt8]? = nil
    ) throws -> [UInt8] {
        let recipient = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: devicePublicKey)
        let info = Self.infoLabel + Array((overrideTopic ?? topic).utf8)
        var sender = try HPKE.Sender(
            recipientKey: recipient,
            ciphersuite: .Curve25519_SHA256_ChachaPoly,
            info: Data(info),
            authenticatedBy: serverKey
        )
        let header = EnvelopeHeader(
            version: 1,
            suite: 1,
            recipientKeyID: try KeyID(bytes: Self.keyID(devicePublicKey)),
            senderKeyID: try KeyID(bytes: Self.keyID(serverPublicKey)),
            messageID: messageID,
            issuedAt: issuedAt,
            expiresAt: expiresAt,
            enc: Array(sender.encapsulatedKey)
        )
        let headerBytes = header.encoded()
        let padded = try paddedOverride ?? Padding.pad(Array(contentJSON.utf8))
        let ciphertext = try sender.seal(padded, authenticating: headerBytes)
        return headerBytes + Array(ciphertext)
    }

    /// Seals and wraps the envelope in the APNs JSON body with the default placeholder.
    func sealBody(
        contentJSON: String,
        to devicePublicKey: [UInt8],
        issuedAt: UInt64,
        expiresAt: UInt64,
        messageID: [UInt8] = TestSealer.randomMessageID()
    ) throws -> [UInt8] {
        let envelope = try sealEnvelope(
            contentJSON: contentJSON,
            to: devicePublicKey,
            issuedAt: issuedAt,
            expiresAt: expiresAt,
            messageID: messageID
        )
        return APNsPayload.encode(placeholder: .default, envelope: envelope)
    }
}

/// A clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: UInt64

    init(_ start: UInt64) { value = start }

    var now: UInt64 {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }

    var clock: SealedPushClock { SealedPushClock { self.now } }
}

/// A fresh, empty temporary directory (not created when `create` is false: only its parent exists).
func makeTemporaryDirectory(create: Bool = true) throws -> URL {
    let base = FileManager.default.temporaryDirectory
        .appendingPathComponent("sealedpush-client-tests-\(UUID().uuidString)")
    if create {
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: false)
    }
    return base
}

/// A fresh, empty directory inside `parent` (a suite's scratch directory, removed with it).
func makeDirectory(in parent: URL) throws -> URL {
    let directory = parent.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
    return directory
}

/// Removes a directory from ``makeTemporaryDirectory(create:)`` and everything in it (a test's `defer`); one already
/// gone is fine.
func removeTemporaryDirectory(_ directory: URL) {
    try? FileManager.default.removeItem(at: directory)
}
