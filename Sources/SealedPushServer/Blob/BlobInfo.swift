import Foundation

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
