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
