#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SealedPushCore

/// A plaintext file opened for ``BlobEncryptor``: read once from start to end, never through a symbolic link.
///
/// ```swift
/// let file = try BlobSourceFile(path: "photo.jpg")
/// let stored = try await store.store(encryptor: BlobEncryptor(), reading: file.read(into:))
/// ```
public final class BlobSourceFile {
    /// The path given at open.
    public let path: String
    /// The file's size when it was opened.
    public let size: Int
    private let descriptor: Int32

    /// Opens a regular file for reading.
    ///
    /// - Parameter path: The file's path; a symbolic link as the last component is refused.
    /// - Throws: `SealedPushError` `io` naming the path and the system error.
    public init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw POSIXBlobIO.error("cannot open \(path)") }
        do {
            size = try POSIXBlobIO.regularFileInfo(descriptor, what: path).size
        } catch {
            close(descriptor)
            throw error
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Reads the next bytes into `buffer` (the ``BlobEncryptor/Read`` shape); 0 at the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try POSIXBlobIO.read(descriptor, into: buffer, what: path)
    }
}
