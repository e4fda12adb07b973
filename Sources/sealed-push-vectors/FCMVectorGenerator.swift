import Foundation
import SealedPushCore
import SealedPushServer

/// Regenerates `Specs/vectors/fcm-v1.json` (`Specs/fcm-v1.md` §8) with the libsodium sealer and fixed inputs:
/// `swift run sealed-push-vectors fcm Specs/vectors/fcm-v1.json`.
enum FCMVectorGenerator {
    static let topic = "com.example.sealedpush.android"
    static let token =
        "cVkq3Xa1Tq2Y9ZbqJ3mHdE:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8kR5eW2aC7bH0xV4yN6mQ1zT3sU"
    static let issuedAt = VectorGenerator.issuedAt
    static let expiresAt = VectorGenerator.expiresAt

    static func run(outPath: String) throws {
        let key = VectorGenerator.key
        let server = try ServerIdentity(privateKey: key(0xA1))
        let device = try ServerIdentity(privateKey: key(0xC3))
        let devicePublic = try DevicePublicKey(rawRepresentation: device.publicKey)
        let sealer = try Sealer(identity: server, topic: topic)

        var positives: [[String: Any]] = []
        func positive(
            _ name: String, _ content: NotificationContent, priority: FCMPriority = .high, collapseKey: String? = nil,
            sendAt: UInt64 = issuedAt, now: UInt64 = issuedAt + 60
        ) throws -> (envelope: [UInt8], data: [String: String]) {
            let index = UInt8(0x80 + positives.count)
            let ephemeral = key(index)
            let messageID = (0..<16).map { UInt8(truncatingIfNeeded: Int(index) << 4 | $0) }
            let sealed = try sealer.seal(
                content, to: devicePublic, ephemeralPrivateKey: ephemeral, messageID: messageID, issuedAt: issuedAt,
                expiresAt: expiresAt)
            let message = FCMMessage(
                token: token, envelope: sealed.envelope, ttlSeconds: FCMMessage.ttl(expiresAt: expiresAt, now: sendAt),
                priority: priority, collapseKey: collapseKey)
            try message.validate()
            let contentJSON = String(decoding: try content.canonicalJSON(), as: UTF8.self)
            var vector: [String: Any] = [
                "name": name, "content": try JSONSerialization.jsonObject(with: Data(contentJSON.utf8)),
                "contentJSON": contentJSON, "ephemeralPrivateKey": Hex.encode(ephemeral),
                "messageId": Hex.encode(messageID), "issuedAt": issuedAt, "expiresAt": expiresAt,
                "envelope": Hex.encode(sealed.envelope), "token": token, "priority": priority.rawValue,
                "ttl": message.ttlText, "data": [FCMPayload.envelopeKey: message.envelopeText],
                "dataSize": message.dataSize, "body": String(decoding: message.body(), as: UTF8.self), "now": now,
            ]
            if let collapseKey { vector["collapseKey"] = collapseKey }
            positives.append(vector)
            return (sealed.envelope, [FCMPayload.envelopeKey: message.envelopeText])
        }

        let base = try positive("minimal-body", NotificationContent(body: "Your code is 271828"))
        _ = try positive(
            "full-content-unicode",
            NotificationContent(
                title: "Ünïcödé ✉️ \"quoted\"", subtitle: "日本語", body: "Line 1\nLine 2\t👩‍👩‍👧‍👦 / \\",
                badge: 3, sound: "default", threadID: "thread-7", category: "MESSAGE",
                data: .object(["conversation": .number(7), "ids": .array([.number(1), .null])])),
            collapseKey: "conversation-7")
        _ = try positive("normal-priority", NotificationContent(body: "later"), priority: .normal)
        _ = try positive("sent-an-hour-late", NotificationContent(body: "resent"), sendAt: issuedAt + 3600)
        // 2,910 bytes of content fill the largest bucket; the data is then 2 + 4,014 = 4,016 bytes (§3).
        _ = try positive("largest-bucket", NotificationContent(body: String(repeating: "z", count: 2899)))

        var negatives: [[String: Any]] = []
        func negative(_ name: String, _ error: SealedPushError.Code, data: [String: String], topic: String = topic,
                      now: UInt64 = issuedAt + 60) {
            negatives.append(["name": name, "data": data, "topic": topic, "now": now, "expectedError": error.name])
        }
        let text = Base64URL.encode(base.envelope)
        negative("missing-envelope", .malformedPayload, data: ["other": text])
        negative("empty-map", .malformedPayload, data: [:])
        negative("standard-base64-padding", .badEncoding, data: ["sp": Data(base.envelope).base64EncodedString()])
        negative("base64-space", .badEncoding, data: ["sp": " " + text])
        negative("text-over-longest-envelope", .malformedEnvelope,
                 data: ["sp": String(repeating: "A", count: FCMPayload.maxEnvelopeTextLength + 1)])
        // At the limit (5,592 characters) step 3a passes and the text decodes: 4,194 zero bytes, version 0x00.
        negative("text-at-longest-envelope", .unsupportedVersion,
                 data: ["sp": String(repeating: "A", count: FCMPayload.maxEnvelopeTextLength)])
        // The limit counts UTF-8 bytes (§4 step 3a): 2,797 "é" are 5,594 bytes, over 5,592, though fewer characters.
        negative("text-over-longest-envelope-in-utf8-bytes", .malformedEnvelope,
                 data: ["sp": String(repeating: "\u{e9}", count: FCMPayload.maxEnvelopeTextLength / 2 + 1)])
        negative("truncated", .truncated, data: ["sp": Base64URL.encode(base.envelope.prefix(225))])
        var altered = base.envelope
        altered[82] ^= 1
        negative("ciphertext-altered", .authenticationFailure, data: ["sp": Base64URL.encode(altered)])
        negative("apns-topic-instead-of-application-id", .authenticationFailure, data: base.data,
                 topic: VectorGenerator.topic)
        negative("expired", .expired, data: base.data, now: expiresAt)
        // An APNs body's envelope sealed for the bundle id: it decodes, but opens only for its own topic.
        let apnsSealer = try Sealer(identity: server, topic: VectorGenerator.topic)
        let apns = try apnsSealer.seal(
            NotificationContent(body: "x"), to: devicePublic, ephemeralPrivateKey: key(0xE1),
            messageID: [UInt8](repeating: 0xE1, count: 16), issuedAt: issuedAt, expiresAt: expiresAt)
        negative("sealed-for-the-ios-bundle-id", .authenticationFailure, data: ["sp": Base64URL.encode(apns.envelope)])

        var budget: [[String: Any]] = []
        func budgetCase(_ name: String, _ data: [String: String]) {
            let size = FCMPayload.dataSize(data)
            budget.append(["name": name, "data": data, "dataSize": size, "fits": size <= FCMPayload.maxDataBytes])
        }
        budgetCase("one-member-at-limit", ["sp": String(repeating: "A", count: 4049)])
        budgetCase("one-member-one-over", ["sp": String(repeating: "A", count: 4050)])
        budgetCase("two-members-at-limit", ["sp": String(repeating: "A", count: 4000), "k": String(repeating: "v", count: 42)])
        budgetCase("two-members-one-over", ["sp": String(repeating: "A", count: 4000), "k": String(repeating: "v", count: 43)])
        budgetCase("three-members", ["a": "1", "bb": "22", "ccc": "333"])
        budgetCase("multibyte-counts-bytes", ["sp": String(repeating: "é", count: 2024) + "x"])
        budgetCase("multibyte-one-over", ["sp": String(repeating: "é", count: 2025)])

        let senderBudget: [[String: Any]] = Padding.buckets.map {
            ["paddedPlaintextLength": $0, "dataSize": FCMPayload.dataSize(paddedPlaintextLength: $0)]
        }

        let file: [String: Any] = [
            "version": 1, "generator": "swift run sealed-push-vectors fcm Specs/vectors/fcm-v1.json", "topic": topic,
            "serverPrivateKey": Hex.encode(key(0xA1)), "serverPublicKey": server.publicKeyText,
            "serverKeyId": server.keyID.hex, "devicePrivateKey": Hex.encode(key(0xC3)),
            "devicePublicKey": device.publicKeyText, "deviceKeyId": device.keyID.hex,
            "positive": positives, "negative": negatives, "budget": budget, "senderBudget": senderBudget,
        ]
        var json = try JSONSerialization.data(
            withJSONObject: file, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        json.append(0x0A)
        try json.write(to: URL(fileURLWithPath: outPath), options: .atomic)
        print("wrote \(positives.count) positive, \(negatives.count) negative and \(budget.count) budget vectors to \(outPath)")
    }
}
