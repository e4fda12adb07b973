import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport
import Testing

/// `Specs/vectors/envelope-v1.json` against both implementations: the libsodium sealer reproduces every positive
/// vector byte for byte, and the swift-crypto opener opens them and rejects every negative one with its code.
/// (`Specs/tools/verify_envelope_vectors.py` checks the same file with a third, Python implementation.)
@Suite struct EnvelopeVectorConformanceTests {
    let file: EnvelopeVectorFile

    init() throws { file = try EnvelopeVectorFile.load() }

    func opener(topic: String? = nil) throws -> EnvelopeOpener {
        try EnvelopeOpener(
            devicePrivateKeys: [Hex.decode(file.devicePrivateKey)],
            serverPublicKeys: [KeyText.decodePublicKey(file.serverPublicKey)], topic: topic ?? file.topic)
    }

    @Test func fileCoversTheSpec() {
        #expect(file.positive.count >= 8)
        let codes = Set(file.negative.map(\.expectedError))
        for code in ["unsupportedVersion", "unsupportedSuite", "unknownRecipientKey", "unknownSenderKey", "expired",
                     "authenticationFailure", "truncated", "badEncoding", "payloadTooLarge", "malformedPayload",
                     "malformedEnvelope", "notYetValid", "malformedContent"] {
            #expect(codes.contains(code), "no negative vector for \(code)")
        }
        for negative in file.negative {
            #expect(SealedPushError.Code.named(negative.expectedError) != nil, "unknown code in \(negative.name)")
        }
    }

    @Test func keyIDsAgreeOnBothSides() throws {
        let serverPublic = try KeyText.decodePublicKey(file.serverPublicKey)
        let devicePublic = try KeyText.decodePublicKey(file.devicePublicKey)
        #expect(try ServerIdentity(privateKey: Hex.decode(file.serverPrivateKey)).keyID.hex == file.serverKeyId)
        #expect(try DevicePublicKey(rawRepresentation: devicePublic).keyID.hex == file.deviceKeyId)
        #expect(try KeyID.derived(fromPublicKey: serverPublic).hex == file.serverKeyId)
        #expect(try KeyID.derived(fromPublicKey: devicePublic).hex == file.deviceKeyId)
    }

    @Test func serverReproducesEveryPositiveVector() throws {
        let identity = try ServerIdentity(privateKey: Hex.decode(file.serverPrivateKey))
        let device = try DevicePublicKey(text: file.devicePublicKey)
        for vector in file.positive {
            let content = try NotificationContent(json: Array(vector.contentJSON.utf8))
            #expect(String(decoding: try content.canonicalJSON(), as: UTF8.self) == vector.contentJSON, "\(vector.name)")
            let sealer = try Sealer(identity: identity, topic: file.topic, placeholder: vector.placeholder)
            let sealed = try sealer.seal(
                content, to: device, ephemeralPrivateKey: Hex.decode(vector.ephemeralPrivateKey),
                messageID: Hex.decode(vector.messageId), issuedAt: vector.issuedAt, expiresAt: vector.expiresAt)
            #expect(Hex.encode(sealed.envelope) == vector.envelope, "\(vector.name): envelope differs")
            #expect(String(decoding: sealed.payload, as: UTF8.self) == vector.payload, "\(vector.name): payload differs")
            #expect(sealed.payload.count <= APNsPayload.maxBodyBytes)
        }
    }

    @Test func clientOpensEveryPositiveVector() throws {
        let opener = try opener()
        for vector in file.positive {
            let opened = try opener.open(body: Array(vector.payload.utf8), now: vector.now)
            #expect(opened.content == (try NotificationContent(json: Array(vector.contentJSON.utf8))), "\(vector.name)")
            #expect(JSONValue.object(try jsonObject(opened.content)) == vector.content, "\(vector.name)")
            #expect(Hex.encode(opened.messageID) == vector.messageId)
        }
    }

    @Test func clientRejectsEveryNegativeVectorWithItsCode() throws {
        for vector in file.negative {
            let opener = try opener(topic: vector.topic)
            do {
                if vector.parsedBody == true {
                    // Handed over parsed, as an extension's userInfo: step 1 does not apply.
                    let userInfo = try JSONSerialization.jsonObject(with: Data(vector.payload.utf8)) as? [String: Any]
                    _ = try opener.open(userInfo: try #require(userInfo), now: vector.now)
                } else {
                    _ = try opener.open(body: Array(vector.payload.utf8), now: vector.now)
                }
                Issue.record("\(vector.name): opened, expected \(vector.expectedError)")
            } catch let error as SealedPushError {
                #expect(error.code.name == vector.expectedError, "\(vector.name): \(error)")
            }
        }
    }

    @Test func clientOpensEveryAcceptedBody() throws {
        #expect(file.accepted.count >= 5)
        let opener = try opener()
        for vector in file.accepted {
            do {
                let opened = try opener.open(body: Array(vector.payload.utf8), now: vector.now)
                #expect(String(decoding: try opened.content.canonicalJSON(), as: UTF8.self) == vector.contentJSON,
                        "\(vector.name)")
            } catch {
                Issue.record("\(vector.name): \(error)")
            }
        }
    }

    @Test func canonicalNumbersMatchTheSpec() throws {
        #expect(file.canonicalNumbers.count >= 20)
        for vector in file.canonicalNumbers {
            let value = Double(bitPattern: try #require(UInt64(vector.bits, radix: 16)))
            #expect(JSONWriter.canonicalNumber(value) == vector.text, "\(vector.bits)")
            // What the writer emits, the strict parser reads back to the same value (no integer beyond 2^53 - 1).
            #expect(try JSONParser.parse(Array(vector.text.utf8)) == .number(value == 0 ? 0 : value), "\(vector.text)")
        }
    }

    @Test func everyParserRejectsTheInvalidPublicKeys() throws {
        for vector in file.invalidPublicKeys {
            #expect(throws: SealedPushError.self, "\(vector.name)") { try KeyText.decodePublicKey(vector.text) }
            #expect(throws: SealedPushError.self, "\(vector.name)") { try DevicePublicKey(text: vector.text) }
            // Texts that are well-formed but name a non-canonical u-coordinate: the raw-key paths reject them too.
            if vector.text.hasPrefix("SPK1:"), let raw = try? Base64URL.decode(utf8: Array(vector.text.utf8.dropFirst(5))),
                raw.count == 32
            {
                #expect(throws: SealedPushError.self, "\(vector.name)") { try DevicePublicKey(rawRepresentation: raw) }
                #expect(throws: SealedPushError.self, "\(vector.name)") {
                    try EnvelopeOpener(
                        devicePrivateKeys: [Hex.decode(file.devicePrivateKey)], serverPublicKeys: [raw], topic: file.topic)
                }
            }
        }
    }

    @Test func largestBucketUsesTheBudgetTheSpecStates() throws {
        let largest = try #require(file.positive.first { $0.name == "largest-bucket" })
        #expect(largest.paddedPlaintext.count / 2 == 2912)
        #expect(largest.payload.utf8.count == 4087)
    }

    @Test func rfc9180VectorCopiesAreIdentical() throws {
        let root = EnvelopeVectorFile.repositoryRoot
        let specCopy = try Data(contentsOf: root.appendingPathComponent("Specs/vectors/rfc9180-x25519-chacha20poly1305.json"))
        let testCopy = try Data(
            contentsOf: root.appendingPathComponent("Sources/SealedPushTestSupport/Vectors/hpke-x25519-chacha-vectors.json"))
        #expect(specCopy == testCopy)
    }

    private func jsonObject(_ content: NotificationContent) throws -> JSONObject {
        try JSONParser.parse(content.canonicalJSON()).objectValue ?? [:]
    }
}
