#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SealedPushCore

/// A blob being written to a temporary file of a ``FileSystemBlobStore``.
actor FileSystemBlobWriter: BlobWriter {
    nonisolated let name: BlobName
    private let temporaryPath: String
    private let finalPath: String
    private let directory: String
    private var descriptor: Int32
    private var written = 0
    private var done = false

    init(name: BlobName, descriptor: Int32, temporaryPath: String, finalPath: String, directory: String) {
        self.name = name
        self.descriptor = descriptor
        self.temporaryPath = temporaryPath
        self.finalPath = finalPath
        self.directory = directory
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !done { unlink(temporaryPath) }
    }

    func write(_ bytes: [UInt8]) async throws {
        guard !done, descriptor >= 0 else {
            throw SealedPushError(.invalidArgument, "blob \(name) was already committed or aborted")
        }
        do {
            try bytes.withUnsafeBytes { try POSIXBlobIO.writeAll(descriptor, $0, what: temporaryPath) }
            written += bytes.count
        } catch {
            await abort()
            throw error
        }
    }

    func commit() async throws -> BlobInfo {
        guard !done, descriptor >= 0 else {
            throw SealedPushError(.invalidArgument, "blob \(name) was already committed or aborted")
        }
        defer { if !done { discard() } }
        guard fsync(descriptor) == 0 else { throw POSIXBlobIO.error("cannot fsync \(temporaryPath)") }
        let closeStatus = close(descriptor)
        descriptor = -1
        guard closeStatus == 0 else { throw POSIXBlobIO.error("cannot close \(temporaryPath)") }
        // A hard link never replaces an existing file; the name is fresh, so EEXIST means a broken random source.
        guard link(temporaryPath, finalPath) == 0 else { throw POSIXBlobIO.error("cannot link blob \(name) into place") }
        unlink(temporaryPath)
        done = true
        POSIXBlobIO.syncDirectory(directory)
        return BlobInfo(name: name, size: written, modified: Date())
    }

    func abort() async {
        discard()
    }

    private func discard() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        unlink(temporaryPath)
        done = true
    }
}
