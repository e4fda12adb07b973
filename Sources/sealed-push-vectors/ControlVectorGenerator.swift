import Foundation
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport

/// Regenerates `Specs/vectors/control-v1.json`: content cases for notification ids and control messages (their
/// canonical form, or refusal), and receipts sealed by a device key with fixed ephemeral keys (HPKE mode_auth from
/// the libsodium sender code, the device as the sender).
///
/// Run: `swift run sealed-push-vectors control Specs/vectors/control-v1.json`.
enum ControlVectorGenerator {
    static let topic = "com.example.sealedpush"
    static let issuedAt: UInt64 = 1_800_000_000

    static func key(_ byte: UInt8) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: Int(byte) &* 37 &+ $0 &* 13) } }

    static func run(outPath: String) throws {
        var cases: [ControlVectorFile.ContentCase] = []
        func content(_ name: String, _ json: String) {
            if let parsed = try? NotificationContent(json: Array(json.utf8)), let canonical = try? parsed.canonicalJSON() {
                cases.append(.init(name: name, json: json, canonical: String(decoding: canonical, as: UTF8.self),
                                   action: parsed.control?.kind.rawValue))
            } else {
                cases.append(.init(name: name, json: json, canonical: nil, action: nil))
            }
        }
        content("notification-id", #"{"body":"hi","notification-id":"msg-7"}"#)
        content("remove-by-ids", #"{"control":{"ids":["msg-7","msg-8"],"action":"remove"},"notification-id":"c-1"}"#)
        content("remove-by-thread", #"{"control":{"action":"remove","thread-id":"chat-42"}}"#)
        content("remove-ids-and-thread", #"{"control":{"action":"remove","ids":["a"],"thread-id":"t"}}"#)
        content("remove-64-ids", #"{"control":{"action":"remove","ids":["# + (0..<64).map { "\"i\($0)\"" }.joined(separator: ",") + "]}}")
        content("update", #"{"body":"new words","title":"Edited","control":{"action":"update","id":"msg-7"},"notification-id":"msg-7"}"#)
        content("update-without-own-id", #"{"body":"new","control":{"action":"update","id":"msg-7"}}"#)
        content("badge", #"{"control":{"count":12,"action":"badge"}}"#)
        content("badge-integral-float", #"{"control":{"action":"badge","count":3.0}}"#)
        content("control-unknown-members-kept", #"{"control":{"action":"badge","count":1},"x-app":[1]}"#)
        // Ids compare code point by code point (§1): "\u00e9" (NFC) and "e\u0301" (NFD) are two ids.
        content("remove-ids-nfc-and-nfd", #"{"control":{"action":"remove","ids":["\u00e9","e\u0301"]}}"#)
        // Refused (malformedContent):
        content("control-not-object", #"{"control":"remove"}"#)
        content("control-without-action", #"{"control":{}}"#)
        content("unknown-action", #"{"control":{"action":"delete","ids":["a"]}}"#)
        content("remove-empty", #"{"control":{"action":"remove"}}"#)
        content("remove-ids-empty-array", #"{"control":{"action":"remove","ids":[]}}"#)
        content("remove-65-ids", #"{"control":{"action":"remove","ids":["# + (0..<65).map { "\"i\($0)\"" }.joined(separator: ",") + "]}}")
        content("remove-duplicate-id", #"{"control":{"action":"remove","ids":["a","a"]}}"#)
        content("remove-id-not-string", #"{"control":{"action":"remove","ids":[1]}}"#)
        content("remove-extra-member", #"{"control":{"action":"remove","ids":["a"],"count":1}}"#)
        content("remove-thread-too-long", #"{"control":{"action":"remove","thread-id":""# + String(repeating: "t", count: 256) + #""}}"#)
        content("update-without-id", #"{"control":{"action":"update"}}"#)
        content("update-id-65-bytes", #"{"control":{"action":"update","id":""# + String(repeating: "x", count: 65) + #""}}"#)
        content("update-id-differs", #"{"notification-id":"a","control":{"action":"update","id":"b"}}"#)
        content("update-id-differs-nfc-nfd", #"{"notification-id":"\u00e9","control":{"action":"update","id":"e\u0301"}}"#)
        content("badge-negative", #"{"control":{"action":"badge","count":-1}}"#)
        content("badge-fraction", #"{"control":{"action":"badge","count":1.5}}"#)
        content("badge-too-large", #"{"control":{"action":"badge","count":2147483648}}"#)
        content("remove-with-body", #"{"body":"hidden words","control":{"action":"remove","ids":["a"]}}"#)
        content("badge-with-title", #"{"title":"t","control":{"action":"badge","count":1}}"#)
        content("remove-with-data", #"{"data":null,"control":{"action":"remove","ids":["a"]}}"#)
        content("notification-id-empty", #"{"notification-id":""}"#)
        content("notification-id-control-char", #"{"notification-id":"a\tb"}"#)
        content("notification-id-not-string", #"{"notification-id":7}"#)

        let device = key(0xC3), server = key(0xA1), otherDevice = key(0xD4)
        let devicePublic = try ServerIdentity(privateKey: device).publicKey
        let serverIdentity = try ServerIdentity(privateKey: server)
        var receipts: [ControlVectorFile.Receipt] = []
        func receipt(_ name: String, _ record: DeliveryReceipt, ephemeral: UInt8, topic: String = topic,
                     sender: [UInt8]? = nil) throws -> [UInt8] {
            let senderKey = sender ?? device
            let receiptID = (0..<16).map { UInt8(truncatingIfNeeded: Int(ephemeral) << 4 | $0) }
            let expiresAt = issuedAt + DeliveryReceipt.maxLifetime
            let schedule = HPKEKeySchedule(mode: .auth, info: try DeliveryReceipt.hpkeInfo(topic: topic))
            var setup = try HPKESender.setupAuth(
                recipientPublicKey: serverIdentity.publicKey, senderPrivateKey: SecretBytes(copying: senderKey),
                schedule: schedule, ephemeralPrivateKey: SecretBytes(copying: key(ephemeral)))
            let header = EnvelopeHeader(
                // The header always names the device's key: a receipt sealed with another key claims it falsely.
                recipientKeyID: serverIdentity.keyID, senderKeyID: try ServerIdentity(privateKey: device).keyID,
                messageID: receiptID, issuedAt: issuedAt, expiresAt: expiresAt, enc: setup.encapsulation.enc)
            let padded = try record.paddedPlaintext()
            let bytes = header.encoded() + (try setup.context.seal(aad: header.encoded(), plaintext: padded))
            if sender == nil, topic == Self.topic {
                receipts.append(.init(
                    name: name, topic: topic, devicePrivateKey: Hex.encode(device), devicePublicKey: Hex.encode(devicePublic),
                    serverPrivateKey: Hex.encode(server), serverPublicKey: Hex.encode(serverIdentity.publicKey),
                    ephemeralPrivateKey: Hex.encode(key(ephemeral)), receiptId: Hex.encode(receiptID), issuedAt: issuedAt,
                    expiresAt: expiresAt, recordJSON: String(decoding: try Padding.unpad(padded), as: UTF8.self),
                    paddedPlaintext: Hex.encode(padded), receipt: Hex.encode(bytes), now: issuedAt + 60))
            }
            return bytes
        }
        let messageID = (0..<16).map { UInt8($0 * 17 & 0xff) }
        let decrypted = try receipt("decrypted", DeliveryReceipt(
            messageID: messageID, outcome: .decrypted, attachmentsDelivered: 2, deviceTime: issuedAt), ephemeral: 0x11)
        _ = try receipt("duplicate", DeliveryReceipt(messageID: messageID, outcome: .duplicate, deviceTime: issuedAt + 3),
                        ephemeral: 0x12)
        _ = try receipt("fallback-replayed", DeliveryReceipt(
            messageID: messageID, outcome: .fallback(reason: "replayed"), attachmentsFailed: 1, deviceTime: issuedAt),
            ephemeral: 0x13)

        var negatives: [ControlVectorFile.ReceiptNegative] = []
        func negative(_ name: String, _ bytes: [UInt8], _ error: SealedPushError.Code, registered: [UInt8]? = devicePublic,
                      topic: String = topic, now: UInt64 = issuedAt + 60) {
            negatives.append(.init(name: name, receipt: Hex.encode(bytes), topic: topic,
                                   devicePublicKey: registered.map(Hex.encode), now: now, expectedError: error.name))
        }
        func altered(_ name: String, _ error: SealedPushError.Code, _ change: (inout [UInt8]) -> Void) {
            var bytes = decrypted
            change(&bytes)
            negative(name, bytes, error)
        }
        altered("ciphertext-altered", .authenticationFailure) { $0[100] ^= 1 }
        altered("tag-altered", .authenticationFailure) { $0[$0.count - 1] ^= 1 }
        altered("message-id-altered", .authenticationFailure) { $0[18] ^= 1 }
        altered("recipient-key-id-altered", .unknownRecipientKey) { $0[2] ^= 1 }
        altered("truncated", .malformedEnvelope) { $0.removeLast() }
        altered("one-byte-over", .malformedEnvelope) { $0.append(0) }
        altered("lifetime-over-7-days", .malformedEnvelope) { bytes in
            let late = issuedAt + DeliveryReceipt.maxLifetime + 1
            for position in 0..<8 { bytes[42 + position] = UInt8(truncatingIfNeeded: late >> UInt64(56 - 8 * position)) }
        }
        // Sealed with another key while naming the device's key id: the registered key does not authenticate it.
        negative("forged-with-another-key", try receipt("x", DeliveryReceipt(
            messageID: messageID, outcome: .decrypted, deviceTime: issuedAt), ephemeral: 0x15, sender: otherDevice),
            .authenticationFailure)
        negative("unregistered-device", decrypted, .unknownSenderKey, registered: nil)
        negative("other-topic", decrypted, .authenticationFailure, topic: "com.example.other")
        negative("expired", decrypted, .expired, now: issuedAt + DeliveryReceipt.maxLifetime)
        negative("not-yet-valid", decrypted, .notYetValid, now: issuedAt - 601)
        negative("sealed-for-another-app", try receipt("x", DeliveryReceipt(
            messageID: messageID, outcome: .decrypted, deviceTime: issuedAt), ephemeral: 0x14, topic: "com.example.other"),
            .authenticationFailure)
        // An authentic receipt whose record breaks §4: opened, then refused.
        func rawRecord(_ name: String, _ json: String, ephemeral: UInt8) throws {
            let schedule = HPKEKeySchedule(mode: .auth, info: try DeliveryReceipt.hpkeInfo(topic: topic))
            var setup = try HPKESender.setupAuth(
                recipientPublicKey: serverIdentity.publicKey, senderPrivateKey: SecretBytes(copying: device),
                schedule: schedule, ephemeralPrivateKey: SecretBytes(copying: key(ephemeral)))
            let header = EnvelopeHeader(
                recipientKeyID: serverIdentity.keyID, senderKeyID: try ServerIdentity(privateKey: device).keyID,
                messageID: [UInt8](repeating: ephemeral, count: 16), issuedAt: issuedAt,
                expiresAt: issuedAt + DeliveryReceipt.maxLifetime, enc: setup.encapsulation.enc)
            var padded = try Padding.pad(Array(json.utf8))
            padded += [UInt8](repeating: 0, count: DeliveryReceipt.paddedLength - padded.count)
            negative(name, header.encoded() + (try setup.context.seal(aad: header.encoded(), plaintext: padded)),
                     .malformedContent)
        }
        let id = Hex.encode(messageID)
        try rawRecord("record-unknown-member", #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"extra":1,"message-id":"\#(id)","outcome":"decrypted"}"#, ephemeral: 0x21)
        try rawRecord("record-reason-without-fallback", #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"\#(id)","outcome":"decrypted","reason":"x"}"#, ephemeral: 0x22)
        try rawRecord("record-fallback-without-reason", #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"\#(id)","outcome":"fallback"}"#, ephemeral: 0x23)
        try rawRecord("record-uppercase-hex", #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"\#(id.uppercased())","outcome":"decrypted"}"#, ephemeral: 0x24)
        try rawRecord("record-attachments-over-8", #"{"attachments":{"delivered":9,"failed":0},"device-time":1,"message-id":"\#(id)","outcome":"decrypted"}"#, ephemeral: 0x25)
        try rawRecord("record-reason-empty", #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"\#(id)","outcome":"fallback","reason":""}"#, ephemeral: 0x26)
        try rawRecord("record-reason-over-32", #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"\#(id)","outcome":"fallback","reason":"abcdefghijklmnopqrstuvwxyz0123456"}"#, ephemeral: 0x27)
        try rawRecord("record-reason-with-space", #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"\#(id)","outcome":"fallback","reason":"timed out"}"#, ephemeral: 0x28)

        let file = ControlVectorFile(
            description: "Specs/control-v1.md vectors: content cases (canonical form and action, both absent when "
                + "refused with malformedContent) and receipts sealed by the device key with fixed ephemeral keys (hex); "
                + "receiptNegatives give the backend's error code. Generated by `swift run sealed-push-vectors control`.",
            contentCases: cases, receipts: receipts, receiptNegatives: negatives)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try (encoder.encode(file) + Data("\n".utf8)).write(to: URL(fileURLWithPath: outPath))
        print("wrote \(cases.count) content cases, \(receipts.count) receipts, \(negatives.count) receipt negatives to \(outPath)")
    }
}
