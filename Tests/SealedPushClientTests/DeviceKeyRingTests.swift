import Crypto
import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

@Suite("Device key ring: generate, rotate, prune, registration, file form")
struct DeviceKeyRingTests {
    @Test("rotation keeps the old key with its retirement time; prune honours the grace window")
    func rotateAndPrune() throws {
        var ring = DeviceKeyRing.generate(now: 1000)
        let first = ring.current
        #expect(first.retiredAt == nil && first.createdAt == 1000)
        let second = ring.rotate(now: 2000)
        #expect(ring.keys.count == 2)
        #expect(ring.current.keyID == second.keyID && second.keyID != first.keyID)
        #expect(ring.key(for: first.keyID)?.retiredAt == 2000)
        #expect(ring.key(for: first.keyID)?.createdAt == 1000)

        #expect(ring.prune(now: 2000 + 99, gracePeriod: 100).isEmpty)
        #expect(ring.prune(now: 2000 + 100, gracePeriod: 100) == [first.keyID])
        #expect(ring.key(for: first.keyID) == nil)
        // The current key is never pruned.
        #expect(ring.prune(now: .max, gracePeriod: 0).isEmpty)
        #expect(ring.keys.count == 1)
    }

    @Test("the default grace window covers the envelope's 28-day maximum lifetime")
    func defaultGrace() {
        #expect(DeviceKeyRing.defaultGracePeriod == 30 * 86_400)
        #expect(DeviceKeyRing.defaultGracePeriod >= EnvelopeV1.maxLifetime)
    }

    @Test("registration: SPK1 text, hex key id recomputed independently, ISO 8601 times")
    func registration() throws {
        let ring = DeviceKeyRing.generate(now: 1_700_000_000)
        let registration = ring.registration(keyLifetime: 86_400)
        #expect(registration.publicKey.hasPrefix("SPK1:") && registration.publicKey.count == 48)
        let raw = try KeyText.decodePublicKey(registration.publicKey)
        #expect(raw == ring.current.publicKey)
        #expect(registration.keyId == Hex.encode(TestSealer.keyID(raw)))

        let json = try JSONEncoder().encode(registration)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["version"] as? Int == 1)
        #expect(object["publicKey"] as? String == registration.publicKey)
        #expect(object["keyId"] as? String == registration.keyId)
        // 1,700,000,000 s = 2023-11-14T22:13:20Z; one day later for the planned expiry.
        #expect(object["createdAt"] as? String == "2023-11-14T22:13:20Z")
        #expect(object["expiresAt"] as? String == "2023-11-15T22:13:20Z")
        #expect(try JSONDecoder().decode(DeviceRegistration.self, from: json) == registration)

        let noExpiry = try JSONSerialization.jsonObject(with: JSONEncoder().encode(ring.registration())) as? [String: Any]
        #expect(noExpiry?["expiresAt"] == nil)
    }

    @Test("file form round-trips and opens what was sealed to every key")
    func fileRoundTrip() throws {
        var ring = DeviceKeyRing.generate(now: 10)
        ring.rotate(now: 20)
        ring.rotate(now: 30)
        let bytes = ring.fileBytes()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("\"format\": \"SealedPush keyring v1\""))
        #expect(text.components(separatedBy: "SPSK1:").count == 4)
        let loaded = try DeviceKeyRing(fileBytes: bytes)
        #expect(loaded.keys.map(\.keyID) == ring.keys.map(\.keyID))
        #expect(loaded.keys.map(\.retiredAt) == [20, 30, nil])
        #expect(loaded.keys.map(\.createdAt) == [10, 20, 30])

        // Each loaded private key really is the private key of its public key: seal to each, open with the ring.
        let sealer = TestSealer()
        let opener = try EnvelopeOpener(keyRing: loaded, serverPublicKeys: [sealer.serverPublicKey], topic: sealer.topic)
        for key in ring.keys {
            let envelope = try sealer.sealEnvelope(contentJSON: #"{"body":"k"}"#, to: key.publicKey, issuedAt: 1, expiresAt: 100)
            #expect(try opener.open(envelope: envelope, now: 50).recipientKeyID == key.keyID)
        }
    }

    /// FuzzKeyRing finding: the keyId mismatch message echoed the first 32 characters of the file's keyId, so a
    /// damaged file with key text in that field (or in `format`) put it into an error message.
    @Test("errors about a damaged key ring never echo its fields")
    func errorsDoNotEchoFields() throws {
        var ring = DeviceKeyRing.generate(now: 10)
        ring.rotate(now: 20)
        let good = String(decoding: ring.fileBytes(), as: UTF8.self)
        let secret = try #require(good.components(separatedBy: "SPSK1:").dropFirst().first.map { String($0.prefix(43)) })
        let current = ring.current.keyID.hex
        let cases = [
            good.replacingOccurrences(of: "\"keyId\": \"\(current)\"", with: "\"keyId\": \"SPSK1:\(secret)\""),
            good.replacingOccurrences(of: "\"format\": \"SealedPush keyring v1\"", with: "\"format\": \"SPSK1:\(secret)\""),
            // The fuzzer's input, minimized: key text spliced into a key id.
            good.replacingOccurrences(of: current, with: String(current.prefix(6)) + "SPSK1:" + secret.prefix(14)),
        ]
        for (index, text) in cases.enumerated() {
            do {
                _ = try DeviceKeyRing(fileBytes: Array(text.utf8))
                Issue.record("case \(index) was accepted")
            } catch let error as SealedPushError {
                #expect(error.code == .keyStoreCorrupt, "case \(index)")
                #expect(!error.message.contains("SPSK1"), "case \(index): \(error.message)")
                #expect(!error.message.contains(String(secret.prefix(12))), "case \(index): \(error.message)")
            }
        }
    }

    @Test("a null retiredAt on the current key, unknown members and whitespace are accepted")
    func lenientWhereTheSpecAllows() throws {
        var ring = DeviceKeyRing.generate(now: 10)
        ring.rotate(now: 20)
        let good = String(decoding: ring.fileBytes(), as: UTF8.self)
        let text = good.replacingOccurrences(of: "\"createdAt\": 20}", with: "\"createdAt\": 20, \"retiredAt\": null, \"note\": [1]}")
            .replacingOccurrences(of: "\"keys\"", with: "\"comment\": {\"a\": 1},\n\t\"keys\"")
        #expect(text != good)
        let loaded = try DeviceKeyRing(fileBytes: Array(text.utf8))
        #expect(loaded.keys.map(\.keyID) == ring.keys.map(\.keyID))
        #expect(loaded.keys.map(\.retiredAt) == [20, nil])
    }

    /// `Specs/keyring-v1.md` §2, as the Java reader and the spec's checker read it (an outside audit found the Swift
    /// reader apart on each): unknown members nested up to 32 levels are ignored; a `privateKey` with the key file's
    /// final newline, or a `publicKey` spelled with a canonically equivalent character, is corrupt.
    @Test("the spec's exact rules: nesting to 32 levels, a private key without newline, texts compared as bytes")
    func exactRules() throws {
        var ring = DeviceKeyRing.generate(now: 10)
        ring.rotate(now: 20)
        let good = String(decoding: ring.fileBytes(), as: UTF8.self)
        func nested(_ arrays: Int) -> String {
            good.replacingOccurrences(
                of: "\"keys\"",
                with: "\"x\": " + String(repeating: "[", count: arrays) + String(repeating: "]", count: arrays)
                    + ", \"keys\"")
        }
        // The root object is level 1, so 31 arrays inside it are 32 levels; 32 arrays are 33.
        for arrays in [8, 20, 31] {
            let loaded = try DeviceKeyRing(fileBytes: Array(nested(arrays).utf8))
            #expect(loaded.keys.map(\.keyID) == ring.keys.map(\.keyID), "\(arrays) nested arrays")
        }
        #expect(errorCode { try DeviceKeyRing(fileBytes: Array(nested(32).utf8)) } == .keyStoreCorrupt)

        let privateText = try #require(good.components(separatedBy: "\"privateKey\": \"").last?.prefix(49))
        let withNewline = good.replacingOccurrences(of: privateText + "\"", with: privateText + "\\n\"")
        #expect(withNewline != good)
        #expect(errorCode { try DeviceKeyRing(fileBytes: Array(withNewline.utf8)) } == .keyStoreCorrupt)

        // A key whose text form has a "K": write it with U+212A KELVIN SIGN instead.
        var kelvinRing = DeviceKeyRing.generate(now: 10)
        while !kelvinRing.current.publicKeyText.dropFirst(5).contains("K") { kelvinRing = DeviceKeyRing.generate(now: 10) }
        let kelvinGood = String(decoding: kelvinRing.fileBytes(), as: UTF8.self)
        let publicText = kelvinRing.current.publicKeyText
        let kelvin = "SPK1:" + publicText.dropFirst(5).replacingOccurrences(of: "K", with: "\u{212A}")
        #expect(kelvin == publicText)  // Swift's `==`: canonically equivalent
        let spelled = kelvinGood.replacingOccurrences(of: "\"publicKey\": \"\(publicText)\"", with: "\"publicKey\": \"\(kelvin)\"")
        #expect(Array(spelled.utf8) != Array(kelvinGood.utf8))
        #expect(errorCode { try DeviceKeyRing(fileBytes: Array(spelled.utf8)) } == .keyStoreCorrupt)
    }

    @Test("invalid key ring files are keyStoreCorrupt")
    func corruptFiles() throws {
        var ring = DeviceKeyRing.generate(now: 10)
        ring.rotate(now: 20)
        let good = String(decoding: ring.fileBytes(), as: UTF8.self)
        let current = ring.current
        let old = ring.keys[0]
        let cases: [String] = [
            "",
            "{",
            "[]",
            #"{"format":"SealedPush keyring v2","keys":[]}"#,
            #"{"format":"SealedPush keyring v1","keys":[]}"#,
            good.replacingOccurrences(of: "\"retiredAt\": 20", with: "\"retiredAt\": null"),
            good.replacingOccurrences(of: "\"createdAt\": 20}", with: "\"createdAt\": 20, \"retiredAt\": 25}"),
            good.replacingOccurrences(of: current.keyID.hex, with: old.keyID.hex),
            good.replacingOccurrences(of: current.publicKeyText, with: old.publicKeyText),
            good.replacingOccurrences(of: "SPSK1:", with: "SPSK2:"),
            // Timestamps: negative, fractional, text, beyond 2^53; entries that are not objects; duplicate members.
            good.replacingOccurrences(of: "\"createdAt\": 20", with: "\"createdAt\": -20"),
            good.replacingOccurrences(of: "\"createdAt\": 20", with: "\"createdAt\": 20.5"),
            good.replacingOccurrences(of: "\"createdAt\": 20", with: "\"createdAt\": \"20\""),
            good.replacingOccurrences(of: "\"createdAt\": 20", with: "\"createdAt\": 9007199254740993"),
            good.replacingOccurrences(of: "\"retiredAt\": 20", with: "\"retiredAt\": true"),
            #"{"format":"SealedPush keyring v1","keys":[1]}"#,
            good.replacingOccurrences(of: "\"createdAt\": 20", with: "\"createdAt\": 20, \"createdAt\": 20"),
        ]
        for (index, text) in cases.enumerated() {
            #expect(errorCode { try DeviceKeyRing(fileBytes: Array(text.utf8)) } == .keyStoreCorrupt, "case \(index)")
        }
        // A flipped bit inside a private key changes its public key: detected.
        var bytes = Array(good.utf8)
        let marker = Array("SPSK1:".utf8)
        let start = try #require(bytes.indices.first { Array(bytes[$0..<min($0 + 6, bytes.count)]) == marker })
        bytes[start + 10] = bytes[start + 10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(errorCode { try DeviceKeyRing(fileBytes: bytes) } == .keyStoreCorrupt)
    }
}

@Suite("No key material in descriptions")
struct KeyMaterialDescriptionTests {
    @Test("print, debugPrint and dump of a key ring and an opener never show private keys")
    func noSecretsInDescriptions() throws {
        var ring = DeviceKeyRing.generate(now: 1)
        ring.rotate(now: 2)
        let file = String(decoding: ring.fileBytes(), as: UTF8.self)
        // The SPSK1 payloads (43 characters after each prefix) are the secrets to look for.
        let secrets = file.components(separatedBy: "SPSK1:").dropFirst().map { String($0.prefix(43)) }
        #expect(secrets.count == 2)
        let opener = try EnvelopeOpener(
            keyRing: ring, serverPublicKeys: [TestSealer().serverPublicKey], topic: "com.example.sealedpush"
        )
        var dumped = ""
        dump(ring, to: &dumped)
        dump(opener, to: &dumped)
        let texts = [
            String(describing: ring), String(reflecting: ring), String(describing: ring.keys),
            String(describing: opener), String(reflecting: opener), dumped,
        ]
        for text in texts {
            #expect(text.contains(ring.current.keyID.hex))
            for secret in secrets {
                #expect(!text.contains(secret))
                #expect(!text.contains("SPSK1"))
            }
        }
        // Raw private key bytes as a decimal array (how the default mirror prints [UInt8]) are absent too.
        for secret in secrets {
            let raw = try KeyText.decodePrivateKeyFile(Array(("SPSK1:" + secret).utf8))
            #expect(!dumped.contains(raw.map(String.init).joined(separator: ", ")))
        }
    }
}
