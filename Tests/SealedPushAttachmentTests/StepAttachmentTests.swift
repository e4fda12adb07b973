import Foundation
import SealedPushBlobServer
import SealedPushClient
import SealedPushClientURLSession
import SealedPushCore
import SealedPushServer
import Testing

/// Issue 11 end to end on loopback: the libsodium side encrypts files and content into a real `FileSystemBlobStore`
/// served by a real `BlobServer`; the extension step downloads them with the real `URLSessionBlobTransport`,
/// decrypts with swift-crypto into files and delivers the text with what made it, exactly once.
@Suite(.serialized) final class StepAttachmentTests {
    let topic = "com.example.attachments"
    let identity: ServerIdentity
    let sealer: Sealer
    let ring = DeviceKeyRing.generate(now: 1)
    /// This test's files (the blob store and the attachments written), removed when the test ends.
    let base: URL
    let storeDirectory: URL
    let store: FileSystemBlobStore
    let attachmentDirectory: URL

    init() throws {
        identity = try ServerIdentity.generate()
        sealer = try Sealer(identity: identity, topic: topic)
        base = FileManager.default.temporaryDirectory.appendingPathComponent("step-attachments-\(UUID().uuidString)")
        storeDirectory = base.appendingPathComponent("blobs")
        attachmentDirectory = base.appendingPathComponent("attachments")
        try FileManager.default.createDirectory(at: attachmentDirectory, withIntermediateDirectories: true)
        store = try FileSystemBlobStore(directory: storeDirectory.path)
    }

    deinit { try? FileManager.default.removeItem(at: base) }

    /// Runs `body` with a started blob server and its URL prefix.
    func withServer<T>(_ body: (String) async throws -> T) async throws -> T {
        let server = BlobServer(store: store)
        try await server.start()
        do {
            let result = try await body("http://127.0.0.1:\(server.port)/")
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    func step(deadline: Duration = .seconds(20), log: ReportLog? = nil) throws -> NotificationServiceStep {
        let receiver = try SealedPushReceiver(
            keyStore: InMemoryKeyStore(keyRing: ring).readOnlyView(), replayGuard: InMemoryReplayGuard(),
            serverPublicKeys: [identity.publicKey], topic: topic)
        return NotificationServiceStep(
            receiver: receiver,
            configuration: .init(
                deadline: deadline, fallbackPlaceholder: .default,
                attachments: AttachmentConfiguration(
                    transport: URLSessionBlobTransport(), directory: attachmentDirectory, deliveryMargin: .milliseconds(200)),
                reportObserver: { log?.append($0) }))
    }

    func device() throws -> DevicePublicKey { try DevicePublicKey(text: ring.current.publicKeyText) }

    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) } }

    /// Encrypts `plaintext` into the store; returns its descriptor.
    func attach(_ plaintext: [UInt8], type: String, prefix: String, thumbnail: AttachmentDescriptor? = nil) async throws
        -> AttachmentDescriptor
    {
        let stored = try await store.store(encryptor: BlobEncryptor(), bytes: plaintext)
        return try stored.encrypted.attachment(
            url: prefix + stored.name.text, mediaType: try #require(AttachmentMediaType(mimeType: type)), thumbnail: thumbnail)
    }

    func deliver(_ step: NotificationServiceStep, _ body: [UInt8]) async -> NotificationDelivery {
        await withCheckedContinuation { continuation in
            step.didReceive(NotificationRequest(body: body)) { continuation.resume(returning: $0) }
        }
    }

    /// The files in the attachments directory, without the folder of verified files kept for duplicates.
    func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: attachmentDirectory.path).filter { $0 != ".verified" }
    }

    @Test func imageAndAudioArriveAsVerifiedFilesWithTheirExtensions() async throws {
        try await withServer { prefix in
            let image = Self.bytes(300_000, seed: 1), audio = Self.bytes(70_000, seed: 2)
            let content = NotificationContent(title: "Alice", body: "Look!", attachments: [
                try await attach(image, type: "image/png", prefix: prefix).jsonValue,
                try await attach(audio, type: "audio/x-m4a", prefix: prefix).jsonValue,
            ])
            let log = ReportLog()
            let delivery = await deliver(try step(log: log), try sealer.seal(content, to: device()).payload)
            #expect(delivery.outcome == .decrypted)
            #expect(delivery.attachmentFailures.isEmpty, "\(delivery.attachmentFailures)")
            #expect(delivery.attachments.map(\.fileURL.pathExtension) == ["png", "m4a"])
            #expect(try Data(contentsOf: delivery.attachments[0].fileURL) == Data(image))
            #expect(try Data(contentsOf: delivery.attachments[1].fileURL) == Data(audio))
            // The report observer runs right after the content handler.
            let end = ContinuousClock.now + .seconds(5)
            while log.all.isEmpty, ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(5)) }
            #expect(log.all.first?.deliveredAttachments == 2)
            #expect(log.all.first?.attachmentFailures.isEmpty == true)
            #expect(try leftovers().count == 2)
        }
    }

    @Test func aMissingBlobAndAForgedKeyStillDeliverTheTextAndNameTheReasons() async throws {
        try await withServer { prefix in
            let good = try await attach(Self.bytes(10_000, seed: 3), type: "image/jpeg", prefix: prefix)
            let gone = try await attach(Self.bytes(10_000, seed: 4), type: "image/jpeg", prefix: prefix)
            let name = try BlobName(validating: String(gone.blob.url.dropFirst(prefix.count)))
            _ = try await store.delete(name)
            // Another blob's key under the right URL: every chunk fails to authenticate.
            let other = try await attach(Self.bytes(10_000, seed: 5), type: "image/jpeg", prefix: prefix)
            var forged = good.jsonValue.objectValue!
            forged["key"] = other.jsonValue.objectValue!["key"]
            let content = NotificationContent(body: "three pictures", attachments: [
                good.jsonValue, gone.jsonValue, .object(forged),
                .object(["url": .string(prefix + "x"), "type": .string("text/plain")]),
            ])
            let delivery = await deliver(try step(), try sealer.seal(content, to: device()).payload)
            guard case .decrypted(let shown) = delivery.content else { Issue.record("not decrypted"); return }
            #expect(shown.body == "three pictures")
            #expect(delivery.attachments.map(\.index) == [0])
            let codes = Dictionary(uniqueKeysWithValues: delivery.attachmentFailures.map { ($0.index ?? -1, $0.code) })
            #expect(codes == [1: .blobUnavailable, 2: .blobAuthenticationFailure, 3: .malformedAttachment])
            for failure in delivery.attachmentFailures { #expect(!failure.message.contains(name.text)) }
            let left = try leftovers()
            #expect(left.count == 1, "only the good file stays: \(left)")
        }
    }

    @Test func expiryDuringADownloadDeliversTheTextAtOnceAndLeavesNoFile() async throws {
        try await withServer { prefix in
            let video = try await attach(Self.bytes(40_000_000, seed: 6), type: "video/mp4", prefix: prefix)
            let content = NotificationContent(body: "a video", attachments: [video.jsonValue])
            let step = try step()
            let body = try sealer.seal(content, to: device()).payload
            let delivered = DeliveryBox()
            step.didReceive(NotificationRequest(body: body)) { delivered.set($0) }
            // Wait until the partial file exists (the download is under way), then the system's expiry call.
            let start = ContinuousClock.now
            while try leftovers().isEmpty, delivered.value == nil, ContinuousClock.now - start < .seconds(10) {
                try await Task.sleep(for: .milliseconds(2))
            }
            step.serviceExtensionTimeWillExpire()
            let delivery = try #require(delivered.value)
            guard case .decrypted(let shown) = delivery.content else { Issue.record("not decrypted"); return }
            #expect(shown.body == "a video")
            // Expiry came first: no file is delivered, the one under way is named, and its partial file goes.
            #expect(delivery.attachments.isEmpty)
            #expect(delivery.attachmentFailures.map(\.code) == [.deadlineExceeded])
            let end = ContinuousClock.now + .seconds(5)
            while try !leftovers().isEmpty, ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(10)) }
            let left = try leftovers()
            #expect(left.isEmpty, "\(left)")
        }
    }

    @Test func aThumbnailStandsInForAVideoThatDidNotArrive() async throws {
        try await withServer { prefix in
            let thumbnail = try await attach(Self.bytes(5_000, seed: 7), type: "image/jpeg", prefix: prefix)
            let video = try await attach(Self.bytes(100_000, seed: 8), type: "video/mp4", prefix: prefix, thumbnail: thumbnail)
            _ = try await store.delete(try BlobName(validating: String(video.blob.url.dropFirst(prefix.count))))
            let content = NotificationContent(body: "clip", attachments: [video.jsonValue])
            let delivery = await deliver(try step(), try sealer.seal(content, to: device()).payload)
            #expect(delivery.attachments.count == 1)
            #expect(delivery.attachments.first?.isThumbnail == true)
            #expect(delivery.attachments.first?.fileURL.pathExtension == "jpg")
            #expect(delivery.attachmentFailures.map(\.code) == [.blobUnavailable])
        }
    }

    @Test func contentByReferenceOpensInFullOrFallsBackToThePreview() async throws {
        try await withServer { prefix in
            let overflow = try OverflowSealer(sealer: sealer, store: store, urlPrefix: prefix)
            let long = NotificationContent(title: "Minutes", body: String(repeating: "The meeting decided things. ", count: 300),
                                           data: .object(["id": .number(7)]))
            let first = try await overflow.seal(long, to: try device())
            let full = await deliver(try step(), first.payload)
            #expect(full.content == .decrypted(long))
            // The blob is gone: the inline preview is the best attempt, and the report says why.
            let prepared = try await overflow.prepare(long)
            _ = try await store.delete(try #require(prepared.blobName))
            let second = try overflow.seal(prepared: prepared, to: try device())
            let preview = await deliver(try step(), second.payload)
            guard case .decrypted(let shown) = preview.content else { Issue.record("not decrypted"); return }
            #expect(shown.title == "Minutes")
            #expect(shown.body?.hasSuffix("…") == true)
            #expect(preview.attachmentFailures.map(\.code) == [.blobUnavailable])
            #expect(preview.attachmentFailures.first?.index == nil)
        }
    }
}

final class ReportLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [NotificationReport] = []
    func append(_ report: NotificationReport) { lock.withLock { items.append(report) } }
    var all: [NotificationReport] { lock.withLock { items } }
}

final class DeliveryBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: NotificationDelivery?
    func set(_ value: NotificationDelivery) { lock.withLock { stored = value } }
    var value: NotificationDelivery? { lock.withLock { stored } }
}
