import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

/// The device's receipt queue and sender (`Specs/control-v1.md` §4) without a network: what is kept, for how long,
/// and what an answer does to it. The end-to-end tests post to a real gateway (`LifecycleEndToEndTests`).
@Suite("Receipt queue and sender")
struct ReceiptSenderTests {
    let topic = "com.example.sealedpush"

    /// Answers from a script, recording what was posted.
    final class ScriptedTransport: ReceiptTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var answers: [ReceiptPostAnswer]
        private(set) var posted: [[UInt8]] = []
        init(_ answers: [ReceiptPostAnswer]) { self.answers = answers }
        func post(_ receipt: [UInt8], deadline: ContinuousClock.Instant) async -> ReceiptPostAnswer {
            lock.withLock {
                posted.append(receipt)
                return answers.isEmpty ? .recorded : answers.removeFirst()
            }
        }
    }

    struct Device {
        let sealer: ReceiptSealer
        let ring: DeviceKeyRing
        let server: TestSealer
        let envelope: [UInt8]
    }

    func device(now: UInt64) throws -> Device {
        let ring = DeviceKeyRing.generate(now: now)
        let server = TestSealer(topic: topic)
        let sealer = try ReceiptSealer(
            keyStore: InMemoryKeyStore(keyRing: ring), serverPublicKeys: [server.serverPublicKey], topic: topic)
        let body = try server.sealBody(
            contentJSON: #"{"body":"hi"}"#, to: ring.keys[0].publicKey, issuedAt: now, expiresAt: now + 3_600)
        return Device(sealer: sealer, ring: ring, server: server, envelope: try APNsPayload.extractEnvelope(fromBody: body))
    }

    static let report = NotificationReport(outcome: .decrypted, deliveredAttachments: 0, thumbnails: 0, attachmentFailures: [])

    @Test("every reason the step can report is a reference code a receipt carries in §4's form")
    func reasonCodes() throws {
        // Core's list (which the gateway's metrics label by) is exactly this module's FallbackReason, and a reader
        // takes each code in a record written out here.
        #expect(Set(FallbackReason.allCases.map(\.rawValue)) == DeliveryReceipt.referenceReasonCodes)
        for reason in FallbackReason.allCases {
            let json = Array((#"{"attachments":{"delivered":0,"failed":0},"device-time":1,"#
                + #""message-id":"000102030405060708090a0b0c0d0e0f","outcome":"fallback","reason":""#
                + reason.rawValue + #""}"#).utf8)
            let padded = [UInt8(json.count >> 8), UInt8(json.count & 0xff)] + json
                + [UInt8](repeating: 0, count: 254 - json.count)
            #expect(try DeliveryReceipt(paddedPlaintext: padded)
                == DeliveryReceipt(messageID: Array(0..<16), outcome: .fallback(reason: reason.rawValue), deviceTime: 1))
        }
    }

    @Test("the queue keeps at most 256 receipts (the oldest go), 0600 each, and drops expired or foreign files")
    func queueBounds() throws {
        let directoryParent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directoryParent) }
        let directory = directoryParent.appendingPathComponent("receipts")
        let queue = ReceiptQueue(directory: directory)
        let now: UInt64 = 1_800_000_000
        let device = try device(now: now)
        for offset in 0..<260 {
            let receipt = try device.sealer.seal(
                DeliveryReceipt(messageID: Array(repeating: UInt8(offset % 256), count: 16), outcome: .decrypted, deviceTime: now),
                deviceKeyID: device.ring.keys[0].keyID, serverKeyID: try KeyID.derived(fromPublicKey: device.server.serverPublicKey),
                now: now + UInt64(offset))
            try queue.add(receipt, header: try EnvelopeHeader(parsing: receipt[0..<EnvelopeV1.headerLength]))
        }
        let names = queue.names()
        #expect(names.count == ReceiptQueue.capacity)
        // The four oldest (issued first) went.
        #expect(names.first?.hasPrefix(String(format: "%016llx", now + 4)) == true)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(names[0]).path)[.posixPermissions]
        #expect(mode as? Int == 0o600)
        // Read at the receipt's expiry (issuedAt + 7 days): dropped, file removed.
        #expect(queue.read(names[0], now: now + 4 + DeliveryReceipt.maxLifetime) == nil)
        #expect(queue.names().count == ReceiptQueue.capacity - 1)
        #expect(queue.read(names[1], now: now) != nil)
        // A file with a receipt's name that is not one: dropped when read.
        let fake = String(repeating: "0", count: 16) + "-" + String(repeating: "a", count: 32) + ReceiptQueue.suffix
        try Data("not a receipt".utf8).write(to: directory.appendingPathComponent(fake))
        #expect(queue.read(fake, now: now) == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(fake).path))
    }

    @Test("recorded and refused receipts leave the queue; one to retry later stays for the next flush")
    func answers() async throws {
        let now: UInt64 = 1_800_000_000
        let device = try device(now: now)
        let directoryParent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directoryParent) }
        let directory = directoryParent.appendingPathComponent("receipts")
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        let later = ScriptedTransport([.retryLater])
        let sender = ReceiptSender(
            sealer: device.sealer, transport: later, queueDirectory: directory, clock: SealedPushClock { now })
        #expect(await sender.send(about: device.envelope, report: Self.report, deadline: deadline) == .queued)
        #expect(sender.queuedCount == 1)
        // What was posted is a receipt about that envelope, from the device's key.
        let posted = try #require(later.posted.first)
        #expect(posted.count == DeliveryReceipt.maximumEnvelopeLength)
        #expect(try EnvelopeHeader(parsing: posted[0..<EnvelopeV1.headerLength]).senderKeyID == device.ring.keys[0].keyID)

        let refusing = ScriptedTransport([.refused(status: 422)])
        let flusher = ReceiptSender(
            sealer: device.sealer, transport: refusing, queueDirectory: directory, clock: SealedPushClock { now })
        #expect(await flusher.flush(deadline: deadline) == 0)
        #expect(refusing.posted == [posted])  // the very same receipt, not a new one
        #expect(flusher.queuedCount == 0)

        let recording = ScriptedTransport([])
        let third = ReceiptSender(
            sealer: device.sealer, transport: recording, queueDirectory: directory, clock: SealedPushClock { now })
        #expect(await third.send(about: device.envelope, report: Self.report, deadline: deadline) == .sent)
        #expect(third.queuedCount == 0)
        // No time left: queued without a post.
        let none = ScriptedTransport([])
        let late = ReceiptSender(sealer: device.sealer, transport: none, queueDirectory: directory, clock: SealedPushClock { now })
        #expect(await late.send(about: device.envelope, report: Self.report, deadline: .now) == .queued)
        #expect(none.posted.isEmpty && late.queuedCount == 1)
        // An envelope this device holds no key for: nothing sealed, nothing queued.
        let stranger = try self.device(now: now)
        #expect(await third.send(about: stranger.envelope, report: Self.report, deadline: deadline) == .notSealed(.unknownSenderKey))
    }
}
