#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SealedPushCore

/// A ``BlobStore`` in one local directory: the embedded default.
///
/// - Each blob is a file named by its ``BlobName`` (48 hex digits), mode 0600, in a directory created 0700.
/// - Writes are atomic: a temporary file `.tmp-<name>` (exclusive create, never through a symbolic link), `fsync`,
///   then a hard link to the final name (which never replaces an existing file), then a directory `fsync`.
/// - Reads open with `O_NOFOLLOW` and accept only regular files; names are validated, so a request can never
///   name a path outside the directory.
public struct FileSystemBlobStore: BlobStore {
    /// The directory holding the blobs.
    public let directory: String

    private static let temporaryPrefix = ".tmp-"

    /// Opens (and, if missing, creates with mode 0700) a blob directory.
    ///
    /// - Parameter directory: The directory path. It must not be a symbolic link.
    /// - Throws: `io` if it cannot be created or is not a directory.
    public init(directory: String) throws {
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw POSIXBlobIO.error("cannot create the blob directory \(directory)")
        }
        guard let info = POSIXBlobIO.lstatInfo(directory) else {
            throw POSIXBlobIO.error("cannot stat the blob directory \(directory)")
        }
        guard info.mode == S_IFDIR else {
            throw SealedPushError(.io, "\(directory) is not a directory (a symbolic link is not followed)")
        }
        self.directory = directory
    }

    public func makeWriter() async throws -> any BlobWriter {
        let name = BlobName.random()
        let temporary = path(Self.temporaryPrefix + name.text)
        let descriptor = Glue.createExclusive(temporary)
        guard descriptor >= 0 else { throw POSIXBlobIO.error("cannot create a blob file in \(directory)") }
        guard fchmod(descriptor, 0o600) == 0 else {
            let error = POSIXBlobIO.error("cannot set mode 0600 on \(temporary)")
            close(descriptor)
            unlink(temporary)
            throw error
        }
        return FileSystemBlobWriter(
            name: name, descriptor: descriptor, temporaryPath: temporary, finalPath: path(name.text),
            directory: directory)
    }

    public func info(_ name: BlobName) async throws -> BlobInfo? {
        guard let info = POSIXBlobIO.lstatInfo(path(name.text)), info.mode == S_IFREG else { return nil }
        return BlobInfo(name: name, size: info.size, modified: Date(timeIntervalSince1970: info.modified))
    }

    public func open(_ name: BlobName, range: Range<Int>?) async throws -> (any BlobReader)? {
        let filePath = path(name.text)
        let descriptor = Glue.openForReading(filePath)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw POSIXBlobIO.error("cannot open blob \(name)")
        }
        do {
            let size = try POSIXBlobIO.regularFileInfo(descriptor, what: "blob \(name)").size
            let wanted = range ?? 0..<size
            guard wanted.lowerBound >= 0, wanted.upperBound <= size else {
                throw SealedPushError(
                    .invalidArgument, "bytes \(wanted.lowerBound)..<\(wanted.upperBound) are outside blob \(name) of \(size) bytes")
            }
            return FileSystemBlobReader(descriptor: descriptor, blobSize: size, range: wanted, what: "blob \(name)")
        } catch {
            close(descriptor)
            throw error
        }
    }

    public func delete(_ name: BlobName) async throws -> Bool {
        if unlink(path(name.text)) == 0 {
            POSIXBlobIO.syncDirectory(directory)
            return true
        }
        if errno == ENOENT { return false }
        throw POSIXBlobIO.error("cannot delete blob \(name)")
    }

    public func list() async throws -> [BlobInfo] {
        try POSIXBlobIO.entries(of: directory).compactMap { entry -> BlobInfo? in
            guard BlobName.isValid(entry), let info = POSIXBlobIO.lstatInfo(path(entry)), info.mode == S_IFREG
            else { return nil }
            return BlobInfo(
                name: try BlobName(validating: entry), size: info.size,
                modified: Date(timeIntervalSince1970: info.modified))
        }.sorted { $0.name < $1.name }
    }

    public func removeBlobs(modifiedBefore date: Date) async throws -> [BlobName] {
        var removed: [BlobName] = []
        let cutoff = date.timeIntervalSince1970
        for entry in try POSIXBlobIO.entries(of: directory) {
            let isTemporary = entry.hasPrefix(Self.temporaryPrefix)
                && BlobName.isValid(String(entry.dropFirst(Self.temporaryPrefix.count)))
            guard isTemporary || BlobName.isValid(entry),
                let info = POSIXBlobIO.lstatInfo(path(entry)), info.mode == S_IFREG, info.modified < cutoff
            else { continue }
            guard unlink(path(entry)) == 0 || errno == ENOENT else {
                throw POSIXBlobIO.error("cannot delete expired blob \(entry)")
            }
            if !isTemporary { removed.append(try BlobName(validating: entry)) }
        }
        if !removed.isEmpty { POSIXBlobIO.syncDirectory(directory) }
        return removed.sorted()
    }

    private func path(_ entry: String) -> String { directory + "/" + entry }
}

/// Unambiguous names for libc calls shadowed by members of the same name.
private enum Glue {
    static func openForReading(_ path: String) -> Int32 {
        #if canImport(Darwin)
        Darwin.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        #elseif canImport(Musl)
        Musl.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        #else
        Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        #endif
    }

    static func createExclusive(_ path: String) -> Int32 {
        #if canImport(Darwin)
        Darwin.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        #elseif canImport(Musl)
        Musl.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        #else
        Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        #endif
    }
}
