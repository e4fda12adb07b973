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

    /// Encrypts bytes already in memory (content sent by reference, a generated file) into a new blob.
    ///
    /// - Parameters:
    ///   - encryptor: A fresh encryptor (a new blob key).
    ///   - bytes: The plaintext.
    /// - Returns: The stored blob's name and key.
    /// - Throws: As ``store(encryptor:reading:)``.
    public func store(encryptor: BlobEncryptor, bytes: [UInt8]) async throws -> StoredBlob {
        var offset = 0
        return try await store(encryptor: encryptor) { buffer in
            let count = Swift.min(buffer.count, bytes.count - offset)
            if count > 0 {
                bytes.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)]))
                }
            }
            offset += count
            return count
        }
    }
}
