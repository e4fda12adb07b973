import Foundation
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport

/// Regenerates `Specs/vectors/envelope-v1.json` with the libsodium sealer and fixed inputs.
///
/// Run: `swift run sealed-push-vectors Specs/vectors/envelope-v1.json`. The output changes only if the format does.
/// `swift run sealed-push-vectors blob Specs/vectors/blob-v1.json` regenerates the blob vectors instead
/// (``BlobVectorGenerator``).
@main
enum VectorGenerator {
    static let topic = "com.example.sealedpush"
    static let issuedAt: UInt64 = 1_800_000_000  // 2027-01-15T08:00:00Z
    static let expiresAt: UInt64 = issuedAt + 86_400

    static func key(_ byte: UInt8) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: Int(byte) &* 31 &+ $0 &* 7) } }

    static func main() throws {
        if CommandLine.arguments.dropFirst().first == "blob" {
            try BlobVectorGenerator.run(outPath: CommandLine.arguments.dropFirst(2).first ?? "Specs/vectors/blob-v1.json")
            return
        }
        let outPath = CommandLine.arguments.dropFirst().first ?? "Specs/vectors/envelope-v1.json"
        let server = try ServerIdentity(privateKey: key(0xA1))
        let otherServer = try ServerIdentity(privateKey: key(0xB2))
        let device = try ServerIdentity(privateKey: key(0xC3))  // an X25519 key pair; only its public half seals
        let otherDevice = try ServerIdentity(privateKey: key(0xD4))
        let devicePublic = try DevicePublicKey(rawRepresentation: device.publicKey)

        var positives: [EnvelopeVectorFile.Positive] = []
        func positive(
            _ name: String, _ content: NotificationContent, placeholder: Placeholder = .default,
            now: UInt64 = issuedAt + 60
        ) throws -> EnvelopeVectorFile.Positive {
            let index = UInt8(positives.count + 1)
            let ephemeral = key(index)
            let messageID = (0..<16).map { UInt8(truncatingIfNeeded: Int(index) << 4 | $0) }
            let sealer = try Sealer(identity: server, topic: topic, placeholder: placeholder)
            let sealed = try sealer.seal(
                content, to: devicePublic, ephemeralPrivateKey: ephemeral, messageID: messageID, issuedAt: issuedAt,
                expiresAt: expiresAt)
            let contentJSON = try content.canonicalJSON()
            let vector = EnvelopeVectorFile.Positive(
                name: name, content: try JSONParser.parse(contentJSON), contentJSON: String(decoding: contentJSON, as: UTF8.self),
                placeholder: placeholder, ephemeralPrivateKey: Hex.encode(ephemeral), messageId: Hex.encode(messageID),
                issuedAt: issuedAt, expiresAt: expiresAt, paddedPlaintext: Hex.encode(try Padding.pad(contentJSON)),
                envelope: Hex.encode(sealed.envelope), payload: String(decoding: sealed.payload, as: UTF8.self), now: now)
            positives.append(vector)
            return vector
        }

        let base = try positive("minimal-body", NotificationContent(body: "Your code is 271828"))
        _ = try positive(
            "full-content-unicode",
            NotificationContent(
                title: "Ünïcödé ✉️ \"quoted\"", subtitle: "日本語のサブタイトル", body: "Line 1\nLine 2\t👩‍👩‍👧‍👦 / \\ \u{01}",
                badge: 42, sound: "chime.caf", threadID: "thread-7", category: "MESSAGE",
                interruptionLevel: .timeSensitive, relevanceScore: 0.75, targetContentID: "conversation/7",
                data: .object([
                    "conversation": .number(7), "ids": .array([.number(1), .number(2.5), .null, .bool(true)]),
                    "nested": .object(["ok": .bool(false), "é": .string("ß")]),
                ])))
        _ = try positive("empty-content", NotificationContent())
        _ = try positive(
            "localized-placeholder-with-sound", NotificationContent(title: "Alice", body: "Lunch?"),
            placeholder: .localized(key: "NEW_MESSAGE", args: ["1"], sound: "default"))
        _ = try positive(
            "titled-placeholder", NotificationContent(body: "Meeting moved to 3pm"),
            placeholder: .text(title: "Calendar", body: "You have an update"))
        _ = try positive(
            "opens-one-second-before-expiry", NotificationContent(body: "boundary"), now: expiresAt - 1)
        // Canonical JSON {"body":"xxx…"} is 11 bytes + the string: 126 bytes fill the 128 bucket exactly.
        _ = try positive("bucket-128-full", NotificationContent(body: String(repeating: "a", count: 115)))
        _ = try positive("bucket-256-first", NotificationContent(body: String(repeating: "b", count: 116)))
        // 2,910 bytes of content fill the largest bucket; the body is then 4,087 bytes (spec §6.1).
        _ = try positive("largest-bucket", NotificationContent(body: String(repeating: "z", count: 2899)))

        var negatives: [EnvelopeVectorFile.Negative] = []
        let envelope = try Hex.decode(base.envelope)
        func negative(_ name: String, _ error: SealedPushError.Code, payload: String, topic: String = topic,
                      now: UInt64 = issuedAt + 60) {
            negatives.append(.init(name: name, payload: payload, topic: topic, now: now, expectedError: error.name))
        }
        func altered(
            _ name: String, _ error: SealedPushError.Code, from source: [UInt8]? = nil, _ change: (inout [UInt8]) -> Void
        ) {
            var bytes = source ?? envelope
            change(&bytes)
            negative(name, error, payload: String(decoding: APNsPayload.encode(placeholder: .default, envelope: bytes), as: UTF8.self))
        }
        altered("version-altered", .unsupportedVersion) { $0[0] = 2 }
        altered("suite-altered", .unsupportedSuite) { $0[1] = 2 }
        altered("recipient-key-id-altered", .unknownRecipientKey) { $0[2] ^= 0x01 }
        altered("sender-key-id-altered", .unknownSenderKey) { $0[17] ^= 0x80 }
        altered("message-id-altered", .authenticationFailure) { $0[18] ^= 0x01 }
        altered("issued-at-altered", .authenticationFailure) { $0[41] ^= 0x01 }
        altered("expires-at-altered", .authenticationFailure) { $0[49] ^= 0x01 }
        altered("lifetime-over-28-days", .malformedEnvelope) { bytes in
            let tooLate = issuedAt + EnvelopeV1.maxLifetime + 1
            for position in 0..<8 { bytes[42 + position] = UInt8(truncatingIfNeeded: tooLate >> UInt64(56 - 8 * position)) }
        }
        altered("enc-altered", .authenticationFailure) { $0[50] ^= 0x01 }
        altered("ciphertext-altered", .authenticationFailure) { $0[82] ^= 0x01 }
        altered("tag-altered", .authenticationFailure) { $0[$0.count - 1] ^= 0x01 }
        // The minimal vector is the smallest envelope (226 bytes): shorten a larger one so it stays over the minimum.
        altered("ciphertext-shortened", .authenticationFailure, from: try Hex.decode(positives[1].envelope)) {
            $0.removeLast()
        }
        altered("truncated", .truncated) { $0.removeLast($0.count - 225) }
        negative("wrong-topic", .authenticationFailure, payload: base.payload, topic: "com.example.other")
        negative("expired", .expired, payload: base.payload, now: expiresAt)
        negative("expired-long-ago", .expired, payload: base.payload, now: expiresAt + 86_400 * 365)

        let foreignSealer = try Sealer(identity: otherServer, topic: topic)
        let foreign = try foreignSealer.seal(
            NotificationContent(body: "x"), to: devicePublic, ephemeralPrivateKey: key(0x61),
            messageID: [UInt8](repeating: 0x61, count: 16), issuedAt: issuedAt, expiresAt: expiresAt)
        negative("unknown-sender", .unknownSenderKey, payload: String(decoding: foreign.payload, as: UTF8.self))
        let sealer = try Sealer(identity: server, topic: topic)
        let otherKey = try sealer.seal(
            NotificationContent(body: "x"), to: DevicePublicKey(rawRepresentation: otherDevice.publicKey),
            ephemeralPrivateKey: key(0x62), messageID: [UInt8](repeating: 0x62, count: 16), issuedAt: issuedAt,
            expiresAt: expiresAt)
        negative("unknown-recipient-key-id", .unknownRecipientKey, payload: String(decoding: otherKey.payload, as: UTF8.self))

        // Authentic envelopes whose plaintext breaks spec §5 or §4: the receiver fails after opening.
        func rawSealed(_ name: String, _ plaintext: [UInt8], ephemeral: UInt8) throws {
            let sealed = try sealer.seal(
                rawPlaintext: plaintext, to: devicePublic, ephemeralPrivateKey: key(ephemeral),
                messageID: [UInt8](repeating: ephemeral, count: 16), issuedAt: issuedAt, expiresAt: expiresAt)
            negative(name, .malformedContent, payload: String(decoding: sealed.payload, as: UTF8.self))
        }
        var nonZeroPadding = try Padding.pad(Array(#"{"body":"x"}"#.utf8))
        nonZeroPadding[nonZeroPadding.count - 1] = 1
        try rawSealed("padding-not-zero", nonZeroPadding, ephemeral: 0x63)
        var overlong = try Padding.pad(Array(#"{"body":"x"}"#.utf8))
        overlong[0] = 0x01  // states 256 + 12 bytes of content in a 128-byte plaintext
        try rawSealed("content-length-beyond-plaintext", overlong, ephemeral: 0x64)
        try rawSealed("content-not-json", Padding.pad(Array("body=x".utf8)), ephemeral: 0x65)
        try rawSealed("content-not-an-object", Padding.pad(Array(#"["x"]"#.utf8)), ephemeral: 0x66)
        try rawSealed("content-duplicated-member", Padding.pad(Array(#"{"body":"a","body":"b"}"#.utf8)), ephemeral: 0x67)
        try rawSealed("content-badge-out-of-range", Padding.pad(Array(#"{"badge":-1}"#.utf8)), ephemeral: 0x68)
        try rawSealed("content-invalid-utf8", Padding.pad([0x7B, 0x22, 0x62, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D]), ephemeral: 0x69)

        let b64 = Base64URL.encode(envelope)
        let standard = Data(envelope).base64EncodedString()
        negative("standard-base64-with-padding", .badEncoding, payload: #"{"aps":{},"sp":""# + standard + #""}"#)
        negative("base64-padding-appended", .badEncoding, payload: #"{"sp":""# + b64 + #"=="}"#)
        negative("base64-space", .badEncoding, payload: #"{"sp":" "# + b64 + #""}"#)
        negative("base64-length-1-mod-4", .badEncoding, payload: #"{"sp":""# + b64 + (b64.count % 4 == 0 ? "A" : String(repeating: "A", count: (5 - b64.count % 4) % 4)) + #""}"#)
        negative("missing-envelope", .malformedPayload, payload: #"{"aps":{"alert":{"body":"x"},"mutable-content":1}}"#)
        negative("envelope-not-a-string", .malformedPayload, payload: #"{"sp":12345}"#)
        negative("duplicated-envelope-member", .malformedPayload, payload: #"{"sp":""# + b64 + #"","sp":""# + b64 + #""}"#)
        negative("not-json", .malformedPayload, payload: "sp=" + b64)
        negative("top-level-array", .malformedPayload, payload: #"[""# + b64 + #""]"#)
        negative("oversize-body", .payloadTooLarge,
                 payload: #"{"aps":{},"pad":""# + String(repeating: "p", count: 4000) + #"","sp":""# + b64 + #""}"#)

        let file = EnvelopeVectorFile(
            generator: "swift run sealed-push-vectors Specs/vectors/envelope-v1.json", topic: topic,
            serverPrivateKey: Hex.encode(key(0xA1)), serverPublicKey: server.publicKeyText, serverKeyId: server.keyID.hex,
            devicePrivateKey: Hex.encode(key(0xC3)), devicePublicKey: device.publicKeyText, deviceKeyId: device.keyID.hex,
            positive: positives, negative: negatives)
        try file.encoded().write(to: URL(fileURLWithPath: outPath), options: .atomic)
        print("wrote \(positives.count) positive and \(negatives.count) negative vectors to \(outPath)")
    }
}
