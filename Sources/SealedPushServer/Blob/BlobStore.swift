import Foundation
import SealedPushCore

/// Where sealed blobs are kept until devices have fetched them: a file system directory
/// (``FileSystemBlobStore``) or, as another implementation of this protocol, an S3-compatible object store.
///
/// Blobs are immutable: a name is written once (``makeWriter()``, ``BlobWriter/commit()``) and never rewritten, so
/// the name itself is a strong validator (an HTTP `ETag`) and responses can be cached as immutable. The sealer
/// only talks to this protocol (``BlobStore/store(encryptor:reading:)``), so adding a store never touches it.
public protocol BlobStore: Sendable {
    /// Starts a new blob under a fresh unguessable name. Nothing is visible under the name until
    /// ``BlobWriter/commit()``; a writer that is aborted or dropped leaves nothing behind.
    func makeWriter() async throws -> any BlobWriter

    /// The size and modification time of a blob, or `nil` if there is none with this name.
    func info(_ name: BlobName) async throws -> BlobInfo?

    /// Opens a blob for reading, whole or a byte range (for HTTP `Range` requests).
    ///
    /// - Parameters:
    ///   - name: The blob's name.
    ///   - range: The byte range to read, within the blob; `nil` for the whole blob.
    /// - Returns: A reader, or `nil` if there is no blob with this name.
    /// - Throws: `invalidArgument` for a range outside the blob, `io` for a storage failure.
    func open(_ name: BlobName, range: Range<Int>?) async throws -> (any BlobReader)?

    /// Deletes a blob.
    ///
    /// - Returns: Whether there was a blob to delete.
    func delete(_ name: BlobName) async throws -> Bool

    /// Every committed blob.
    func list() async throws -> [BlobInfo]

    /// Deletes every blob (and every abandoned partial write) last modified before `date`.
    ///
    /// Call it periodically with `now − (the longest envelope lifetime) − a margin`, so a blob is kept at least
    /// until every envelope that refers to it has expired.
    ///
    /// - Returns: The names of the deleted blobs.
    func removeBlobs(modifiedBefore date: Date) async throws -> [BlobName]
}

/// A blob being written. Write the pieces in order, then ``commit()`` or ``abort()``.
public protocol BlobWriter: AnyObject, Sendable {
    /// The name the blob will have once committed.
    var name: BlobName { get }
    /// Appends bytes.
    func write(_ bytes: [UInt8]) async throws
    /// Makes the blob visible under ``name``, durably.
    func commit() async throws -> BlobInfo
    /// Discards everything written.
    func abort() async
}

/// An open blob (or byte range of one).
public protocol BlobReader: AnyObject, Sendable {
    /// The blob's whole size in bytes.
    var blobSize: Int { get }
    /// The byte range being read.
    var range: Range<Int> { get }
    /// The next bytes of the range, at most `maxCount`; empty at the end of the range.
    func read(maxCount: Int) async throws -> [UInt8]
    /// Releases the reader (also done when it is dropped).
    func close() async
}

/// A stored blob's name, size and modification time.
public struct BlobInfo: Sendable, Hashable {
    /// The name.
    public let name: BlobName
    /// The size in bytes.
    public let size: Int
    /// When the blob was committed.
    public let modified: Date

    /// Creates an info value.
    public init(name: BlobName, size: Int, modified: Date) {
        self.name = name
        self.size = size
        self.modified = modified
    }
}

/// A blob that was encrypted into a store.
public struct StoredBlob: Sendable {
    /// Its name in the store.
    public let name: BlobName
    /// Its key and sizes.
    public let encrypted: EncryptedBlob
}

extension BlobStore {
    /// Encrypts a file or stream into a new blob in this store: the sealer's one entry point.
    ///
    /// The plaintext is read once in 64 KiB pieces; on any failure the partial blob is discarded.
    ///
    /// - Parameters:
    ///   - encryptor: A fresh encryptor (it holds the new blob's key).
    ///   - reading: The plaintext source.
    /// - Returns: The name, key and sizes.
    public func store(encryptor: BlobEncryptor, reading: BlobEncryptor.Read) async throws -> StoredBlob {
        let writer = try await makeWriter()
        do {
            let encrypted = try await encryptor.encrypt(reading: reading, into: writer)
            _ = try await writer.commit()
            return StoredBlob(name: writer.name, encrypted: encrypted)
        } catch {
            await writer.abort()
            throw error
        }
    }
}
