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
