#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file steps of ``SQLiteGatewayStore/backup(to:pagesPerStep:progress:)``: a new file made 0600 and exclusively, synced, then
/// named without replacing anything, never through a symlink.
enum BackupFile {
    /// Whether anything (a file, a directory, a symlink, even a dangling one) has this path.
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 || errno != ENOENT
    }

    /// Creates an empty file, 0600, failing if the path exists.
    static func createEmpty(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create \(path)") }
        _ = close(descriptor)
    }

    /// Writes the file's data to disk.
    static func sync(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw failure("cannot open \(path) to sync it") }
        defer { _ = close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("cannot sync \(path)") }
    }

    /// Gives `source` the name `destination` as well, only if nothing has that name (rename would replace a file
    /// made meanwhile), then syncs the directory so the name survives a crash.
    static func name(_ source: String, as destination: String) throws {
        guard link(source, destination) == 0 else { throw failure("cannot name the backup \(destination)") }
        let directory = URL(fileURLWithPath: destination).deletingLastPathComponent().path
        let descriptor = open(directory, O_RDONLY | O_CLOEXEC | O_DIRECTORY)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            _ = close(descriptor)
        }
    }

    /// Removes a file if it is there.
    static func remove(_ path: String) { _ = unlink(path) }

    private static func failure(_ what: String) -> GatewayStoreError {
        GatewayStoreError(.invalidArgument, "\(what): \(String(cString: strerror(errno)))")
    }
}
