import Foundation
import SealedPushCore
import SealedPushTestSupport
import Testing

@testable import SealedPushClient

/// The file side of the client's blob reader: chunks are written as soon as they verify, the file gets the media
/// type's extension, and no partial file survives a failure, a cancel or an abandoned opener.
@Suite("BlobFileOpener: files")
struct BlobFileOpenerTests {
    let key = (0..<32).map { UInt8($0 * 3 + 1) }
    let salt = (0..<16).map { UInt8(0xA0 + $0) }

    func sealed(_ size: Int) throws -> (plaintext: [UInt8], blob: [UInt8]) {
        var generator = SplitMix64(seed: UInt64(size))
        let plaintext = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return (plaintext, try TestBlobSealer.seal(key: key, salt: salt, plaintext: plaintext))
    }

    func descriptor(type: String, size: Int) throws -> AttachmentDescriptor {
        try AttachmentDescriptor(
            parsing: .object([
                "url": .string("https://blobs.example.com/x"), "key": .string(Base64URL.encode(key)),
                "size": .number(Double(size)), "type": .string(type),
            ]))
    }

    @Test(arguments: [
        ("image/jpeg", "jpg"), ("image/png", "png"), ("image/gif", "gif"), ("audio/mpeg", "mp3"),
        ("audio/x-m4a", "m4a"), ("audio/mp4", "m4a"), ("audio/wav", "wav"), ("video/mp4", "mp4"),
        ("video/quicktime", "mov"), ("IMAGE/JPEG", "jpg"),
    ])
    func theFileGetsTheExtensionOfItsMediaType(type: String, fileExtension: String) throws {
        let (plaintext, blob) = try sealed(1_234)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let opener = try BlobFileOpener(attachment: descriptor(type: type, size: plaintext.count), directory: directory.url)
        try opener.append(blob)
        let url = try opener.finish()
        #expect(url.pathExtension == fileExtension)
        #expect(url.deletingLastPathComponent().standardizedFileURL.path == directory.url.standardizedFileURL.path)
        #expect(try Array(Data(contentsOf: url)) == plaintext)
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test func eachChunkIsWrittenAsSoonAsItVerifiesAndNotBefore() throws {
        let (plaintext, blob) = try sealed(2 * 65_536 + 10)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let opener = try BlobFileOpener(
            key: key, plaintextSize: plaintext.count, maxPlaintextSize: plaintext.count, directory: directory.url,
            fileExtension: "bin")
        func written() throws -> Int {
            let entries = try directory.entries()
            try #require(entries.count == 1)
            return try Data(contentsOf: directory.url.appendingPathComponent(entries[0])).count
        }
        let firstChunkEnd = 21 + 65_552
        try opener.append(blob[0..<firstChunkEnd - 1])
        #expect(try written() == 0, "nothing is written before the first chunk is complete")
        try opener.append(blob[firstChunkEnd - 1..<firstChunkEnd])
        #expect(try written() == 65_536, "the first chunk is written the moment its last byte arrives")
        try opener.append(blob[firstChunkEnd...])
        let url = try opener.finish()
        #expect(try Array(Data(contentsOf: url)) == plaintext)
    }

    @Test func aDamagedLaterChunkDeletesTheChunksAlreadyWritten() throws {
        let (plaintext, original) = try sealed(3 * 65_536)
        var blob = original
        blob[21 + 2 * 65_552 + 100] ^= 0x04
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let opener = try BlobFileOpener(
            key: key, plaintextSize: plaintext.count, maxPlaintextSize: plaintext.count, directory: directory.url,
            fileExtension: "bin")
        try opener.append(blob[0..<(21 + 2 * 65_552)])
        #expect(try directory.entries().count == 1)
        #expect(blobOpenCode { try opener.append(blob[(21 + 2 * 65_552)...]) } == .blobAuthenticationFailure)
        #expect(try directory.entries().isEmpty)
        #expect(blobOpenCode { try opener.append([0]) } == .invalidArgument, "a failed opener refuses more input")
        #expect(blobOpenCode { _ = try opener.finish() } == .invalidArgument)
    }

    @Test func cancelDeletesThePartialFileAndIsIdempotent() throws {
        let (plaintext, blob) = try sealed(100_000)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let opener = try BlobFileOpener(
            key: key, plaintextSize: plaintext.count, maxPlaintextSize: plaintext.count, directory: directory.url,
            fileExtension: "mp4")
        try opener.append(blob[0..<70_000])
        #expect(try directory.entries().count == 1)
        opener.cancel()
        opener.cancel()
        #expect(try directory.entries().isEmpty)
        #expect(blobOpenCode { try opener.append(blob[70_000...]) } == .invalidArgument)
    }

    @Test func cancelFromAnotherThreadDuringAppendsLeavesNoFile() async throws {
        let (plaintext, blob) = try sealed(600_000)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let opener = try BlobFileOpener(
            key: key, plaintextSize: plaintext.count, maxPlaintextSize: plaintext.count, directory: directory.url,
            fileExtension: "mp4")
        let feeding = Task.detached {
            var offset = 0
            while offset < blob.count {
                let end = min(blob.count, offset + 4_096)
                do { try opener.append(blob[offset..<end]) } catch { return }
                offset = end
            }
            _ = try? opener.finish()
        }
        opener.cancel()
        await feeding.value
        // Either the cancel came first (no file at all) or the feed had finished (only the complete file).
        let entries = try directory.entries()
        #expect(entries.isEmpty || (entries.count == 1 && !entries[0].hasSuffix(".partial")))
    }

    @Test func anAbandonedOpenerDeletesItsPartialFile() throws {
        let (plaintext, blob) = try sealed(70_000)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let opener = try BlobFileOpener(
                key: key, plaintextSize: plaintext.count, maxPlaintextSize: plaintext.count, directory: directory.url,
                fileExtension: "bin")
            try opener.append(blob[0..<66_000])
            #expect(try directory.entries().count == 1)
        }
        #expect(try directory.entries().isEmpty)
    }

    @Test func aDeclaredSizeOverTheKindsCapFailsBeforeAnyFileIsCreated() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The descriptor parser refuses it; the opener refuses it as well when given the size directly.
        #expect(blobOpenCode { _ = try descriptor(type: "image/jpeg", size: 10_000_001) } == .blobTooLarge)
        #expect(blobOpenCode { _ = try descriptor(type: "audio/mpeg", size: 5_000_001) } == .blobTooLarge)
        #expect(blobOpenCode { _ = try descriptor(type: "video/mp4", size: 50_000_001) } == .blobTooLarge)
        let image = try descriptor(type: "image/jpeg", size: 10_000_000)
        #expect(blobOpenCode { _ = try BlobFileOpener(attachment: image, directory: directory.url, maxPlaintextSize: 9_999_999) }
            == .blobTooLarge)
        #expect(try directory.entries().isEmpty)
    }

    @Test func bytesBeyondTheDeclaredSizeFailWhenTheyArriveWhateverTheSplit() throws {
        let (plaintext, blob) = try sealed(10_000)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A sender that declared 10,000 bytes but keeps sending: refused at the first extra byte.
        let opener = try BlobFileOpener(
            key: key, plaintextSize: plaintext.count, maxPlaintextSize: 10_000_000, directory: directory.url,
            fileExtension: "jpg")
        try opener.append(blob)
        #expect(blobOpenCode { try opener.append([UInt8](repeating: 0, count: 1_000_000)) } == .blobTrailingData)
        #expect(try directory.entries().isEmpty)
    }

    @Test func errorsNameNoKeyMaterial() throws {
        let (_, blob) = try sealed(500)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let opener = try BlobFileOpener(
            key: key, plaintextSize: 500, maxPlaintextSize: 500, directory: directory.url, fileExtension: "bin")
        var damaged = blob
        damaged[30] ^= 1
        do {
            try opener.append(damaged)
            Issue.record("a damaged blob opened")
        } catch let error as SealedPushError {
            #expect(error.code == .blobAuthenticationFailure)
            #expect(!error.description.contains(Base64URL.encode(key)))
            #expect(!error.description.contains(Hex.encode(key)))
        }
        let descriptor = try descriptor(type: "image/png", size: 500)
        var dumped = ""
        dump(descriptor, to: &dumped)
        for text in ["\(descriptor)", String(reflecting: descriptor), dumped] {
            #expect(!text.contains(Base64URL.encode(key)) && !text.contains("\(key)"), "\(text)")
        }
    }

    @Test func aMissingDirectoryIsAnIOError() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("sp-missing-\(UUID().uuidString)")
        #expect(blobOpenCode {
            _ = try BlobFileOpener(key: key, plaintextSize: 1, maxPlaintextSize: 1, directory: missing, fileExtension: "bin")
        } == .io)
    }
}
