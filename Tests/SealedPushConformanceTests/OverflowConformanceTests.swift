import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer
import Testing

/// Content over the APNs budget (issue 11 point 3): the libsodium `OverflowSealer` stores the full content as a blob
/// and seals a preview with `content-ref`; the swift-crypto side opens the envelope and, reading the stored blob,
/// gets the full content back.
@Suite final class OverflowConformanceTests {
    let directory: URL
    let sealer: Sealer
    let deviceKey = DeviceKeyRing.generate(now: 1)
    let store: FileSystemBlobStore
    let overflow: OverflowSealer

    init() throws {
        let identity = try ServerIdentity.generate()
        sealer = try Sealer(identity: identity, topic: "com.example.overflow")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("overflow-\(UUID().uuidString)")
        store = try FileSystemBlobStore(directory: directory.path)
        overflow = try OverflowSealer(sealer: sealer, store: store, urlPrefix: "https://blobs.example.com/b/")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func open(_ body: [UInt8]) throws -> NotificationContent {
        let opener = try EnvelopeOpener(
            keyRing: deviceKey, serverPublicKeys: [sealer.identity.publicKey], topic: sealer.topic)
        return try opener.open(body: body, now: Sealer.currentTime()).content
    }

    var device: DevicePublicKey { get throws { try DevicePublicKey(text: deviceKey.current.publicKeyText) } }

    @Test func contentThatFitsGoesInline() async throws {
        let content = NotificationContent(title: "Hi", body: "short")
        let sealed = try await overflow.seal(content, to: try device)
        #expect(try open(sealed.payload) == content)
        #expect(try await store.list().isEmpty)
    }

    @Test func longContentGoesByReferenceWithAPreviewThatFits() async throws {
        let body = String(repeating: "Ünïcödé paragraph with some words. ", count: 400)  // ≈ 14 KB
        let content = NotificationContent(
            title: "Quarterly report", body: body, badge: 3, threadID: "reports",
            data: .object(["report": .number(42), "pages": .array((0..<200).map { .number(Double($0)) })]),
            attachments: [.object(["url": .string("https://blobs.example.com/b/image"), "type": .string("image/png")])])
        // The plain sealer refuses it...
        #expect(throws: SealedPushError.self) { try sealer.seal(content, to: try device) }
        // ...the overflow sealer sends a preview that fits and refers to the full content.
        let sealed = try await overflow.seal(content, to: try device)
        #expect(sealed.payload.count <= APNsPayload.maxBodyBytes)
        let preview = try open(sealed.payload)
        #expect(preview.title == "Quarterly report")
        #expect(preview.badge == 3 && preview.threadID == "reports")
        #expect(preview.data == nil && preview.attachments == nil)
        let previewBody = try #require(preview.body)
        #expect(previewBody.hasSuffix("…") && body.hasPrefix(String(previewBody.dropLast())))
        #expect(previewBody.count > 1_000, "the preview uses the room it has")
        // The reference: parse with Core's rules, read the stored blob, open it with the client (swift-crypto).
        let reference = try BlobReference(parsing: try #require(preview.contentReference))
        #expect(reference.url.hasPrefix("https://blobs.example.com/b/"))
        let name = try BlobName(validating: String(reference.url.dropFirst("https://blobs.example.com/b/".count)))
        let reader = try #require(try await store.open(name, range: nil))
        var blob: [UInt8] = []
        while blob.count < reader.blobSize { blob += try await reader.read(maxCount: 65_536) }
        await reader.close()
        let full = try NotificationContent(json: BlobOpener.open(blob, reference: reference))
        #expect(full == content)
        // The store holds ciphertext only.
        #expect(!String(decoding: blob, as: UTF8.self).contains("Quarterly"))
    }

    @Test func preparedContentIsStoredOnceForManyDevices() async throws {
        let content = NotificationContent(body: String(repeating: "x", count: 5_000))
        let prepared = try await overflow.prepare(content)
        #expect(prepared.blobName != nil)
        for _ in 0..<3 { _ = try overflow.seal(prepared: prepared, to: try device) }
        #expect(try await store.list().count == 1)
    }

    @Test func overTheCapEvenByReferenceIsContentTooLargeWithTheNumbers() async throws {
        let content = NotificationContent(body: String(repeating: "y", count: 70_000))
        do {
            _ = try await overflow.seal(content, to: try device)
            Issue.record("sealed content over the cap")
        } catch let error as SealedPushError {
            #expect(error.code == .contentTooLarge)
            #expect(error.message.contains("65536"))
        }
        #expect(try await store.list().isEmpty)
    }
}
