import Foundation
import SealedPushCore
import SealedPushTestSupport
import Testing

@testable import SealedPushServer

/// `FileSystemBlobStore` on real files in a temporary directory.
@Suite("FileSystemBlobStore")
final class FileSystemBlobStoreTests {
    let root: URL
    let store: FileSystemBlobStore

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sp-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        store = try FileSystemBlobStore(directory: root.appendingPathComponent("blobs").path)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    func entries() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted() }

    func plaintextFile(size: Int) throws -> (path: String, bytes: [UInt8]) {
        var generator = SplitMix64(seed: UInt64(size))
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let path = root.appendingPathComponent("plain-\(size).bin").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    func readAll(_ name: BlobName, range: Range<Int>? = nil) async throws -> [UInt8]? {
        guard let reader = try await store.open(name, range: range) else { return nil }
        var bytes: [UInt8] = []
        while true {
            let piece = try await reader.read(maxCount: 10_000)
            if piece.isEmpty { break }
            bytes += piece
        }
        await reader.close()
        return bytes
    }

    @Test func aFileIsEncryptedIntoTheStoreAndReadsBackWholeAndByRange() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let (path, plaintext) = try plaintextFile(size: 200_000)
        let source = try BlobSourceFile(path: path)
        let stored = try await store.store(encryptor: BlobEncryptor(), reading: source.read(into:))
        #expect(BlobName.isValid(stored.name.text) && stored.name.text.count == 48)
        #expect(stored.encrypted.plaintextSize == 200_000)
        #expect(try entries() == [stored.name.text], "only the committed blob, no temporary file")

        let info = try #require(try await store.info(stored.name))
        #expect(info.size == stored.encrypted.ciphertextSize)
        let attributes = try FileManager.default.attributesOfItem(atPath: store.directory + "/" + stored.name.text)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let directoryAttributes = try FileManager.default.attributesOfItem(atPath: store.directory)
        #expect((directoryAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)

        let blob = try #require(try await readAll(stored.name))
        #expect(blob.count == info.size)
        #expect(try BlobDecryptor.decrypt(blob, key: stored.encrypted.keyBytes, plaintextSize: 200_000) == plaintext)
        #expect(try await readAll(stored.name, range: 100..<70_000) == Array(blob[100..<70_000]))
        #expect(try await readAll(stored.name, range: blob.count..<blob.count) == [])
        #expect(try await store.list().map(\.name) == [stored.name])
    }

    @Test func missingBlobsBadRangesAndDeletion() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let stored = try await store.store(encryptor: BlobEncryptor(), reading: { _ in 0 })
        #expect(stored.encrypted.ciphertextSize == 37)
        do {
            _ = try await store.open(stored.name, range: 0..<38)
            Issue.record("a range past the end was accepted")
        } catch let error as SealedPushError {
            #expect(error.code == .invalidArgument)
        }
        #expect(try await store.delete(stored.name))
        #expect(try await store.delete(stored.name) == false)
        #expect(try await store.open(stored.name, range: nil) == nil)
        #expect(try await store.info(stored.name) == nil)
        #expect(try entries().isEmpty)
    }

    @Test func aFailingSourceOrAnAbortLeavesNothingBehind() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        var calls = 0
        do {
            _ = try await store.store(
                encryptor: BlobEncryptor(),
                reading: { buffer in
                    calls += 1
                    if calls > 3 { throw SealedPushError(.io, "the source broke") }
                    return buffer.count
                })
            Issue.record("a failing source stored a blob")
        } catch let error as SealedPushError {
            #expect(error.message == "the source broke")
        }
        let writer = try await store.makeWriter()
        try await writer.write([1, 2, 3])
        #expect(try entries().count == 1, "the temporary file exists while writing")
        await writer.abort()
        #expect(try entries().isEmpty)
        do {
            let dropped = try await store.makeWriter()
            try await dropped.write([1])
        }
        #expect(try entries().isEmpty, "a writer dropped without commit removes its temporary file")
    }

    @Test func namesAreValidatedAndNeverPaths() throws {
        for bad in ["", "../etc/passwd", String(repeating: "A", count: 48), String(repeating: "a", count: 47),
                    String(repeating: "a", count: 49), String(repeating: "g", count: 48), String(repeating: "0", count: 46) + "/x"] {
            #expect(throws: SealedPushError.self) { _ = try BlobName(validating: bad) }
        }
        let names = Set((0..<100).map { _ in BlobName.random() })
        #expect(names.count == 100)
        #expect(names.allSatisfy { BlobName.isValid($0.text) })
    }

    @Test func symbolicLinksAreNotFollowed() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let (path, _) = try plaintextFile(size: 10)
        let name = BlobName.random()
        try FileManager.default.createSymbolicLink(atPath: store.directory + "/" + name.text, withDestinationPath: path)
        do {
            _ = try await store.open(name, range: nil)
            Issue.record("a symbolic link was followed")
        } catch let error as SealedPushError {
            #expect(error.code == .io)
        }
        #expect(try await store.info(name) == nil)
        #expect(try await store.list().isEmpty)
        let linkedDirectory = root.appendingPathComponent("linked").path
        try FileManager.default.createSymbolicLink(atPath: linkedDirectory, withDestinationPath: store.directory)
        #expect(throws: SealedPushError.self) { _ = try FileSystemBlobStore(directory: linkedDirectory) }
        #expect(throws: SealedPushError.self) { _ = try BlobSourceFile(path: linkedDirectory) }
    }

    @Test func expiryRemovesOldBlobsAndAbandonedTemporaryFilesOnly() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let old = try await store.store(encryptor: BlobEncryptor(), reading: { _ in 0 })
        let fresh = try await store.store(encryptor: BlobEncryptor(), reading: { _ in 0 })
        let abandoned = store.directory + "/.tmp-" + BlobName.random().text
        _ = FileManager.default.createFile(atPath: abandoned, contents: Data([1]))
        let unrelated = store.directory + "/README"
        _ = FileManager.default.createFile(atPath: unrelated, contents: Data([1]))
        let longAgo = Date(timeIntervalSinceNow: -30 * 86_400)
        for path in [store.directory + "/" + old.name.text, abandoned, unrelated] {
            try FileManager.default.setAttributes([.modificationDate: longAgo], ofItemAtPath: path)
        }
        let removed = try await store.removeBlobs(modifiedBefore: Date(timeIntervalSinceNow: -29 * 86_400))
        #expect(removed == [old.name])
        #expect(try entries() == ["README", fresh.name.text].sorted())
    }
}
