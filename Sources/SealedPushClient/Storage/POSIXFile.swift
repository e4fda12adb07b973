#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// Small POSIX file helpers shared by ``FileKeyStore`` and ``FileReplayGuard``: bounded reads, atomic 0600 writes
/// (temporary file in the same directory, `fsync`, `rename`, directory `fsync`) and `flock` locks.
enum POSIXFile {
    /// Outcome of a read that distinguishes "not there" and "not readable" from other failures.
    enum ReadResult {
        case bytes([UInt8])
        case missing
        case denied(Int32)
    }

    /// Hook run after the temporary file is complete and synced, just before `rename`; tests inject failures here.
    typealias BeforeRename = @Sendable (_ temporaryPath: String) throws -> Void

    static func errnoText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// What is at a path, without following a final symbolic link.
    enum Kind: Equatable {
        case missing, directory, regularFile, symbolicLink, other
    }

    /// What is at `path` (`lstat`: a symbolic link is reported as such, never followed).
    static func kind(_ path: String) -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .regularFile
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    /// Fails with `keyStoreCorrupt` naming `path` when it is a symbolic link or not a directory; returns false when
    /// it is missing. Key material and replay state are never reached through a link (`Specs/keyring-v1.md` §2.1).
    static func checkDirectory(_ path: String) throws -> Bool {
        switch kind(path) {
        case .directory: return true
        case .missing: return false
        case .symbolicLink:
            throw SealedPushError(
                .keyStoreCorrupt, "\(path) is a symbolic link; a key ring directory must be a real directory (not followed)")
        case .regularFile, .other:
            throw SealedPushError(.keyStoreCorrupt, "\(path) exists but is not a directory")
        }
    }

    /// Creates `path` with mode 0700 if missing (missing parents are created with the default mode). An existing
    /// directory is used as it is — its mode is never changed (`--keyring .` must not make the working directory
    /// private) — if this user owns it and only the owner may write to it; otherwise it is refused with
    /// `keyStoreCorrupt` naming its owner or mode. A symbolic link (or anything not a directory) at `path` is refused
    /// with `keyStoreCorrupt`; the directory is opened with `O_NOFOLLOW` and checked with `fstat`, so no link target
    /// is ever changed or trusted.
    static func ensurePrivateDirectory(_ path: String) throws {
        var created = mkdir(path, 0o700) == 0
        if !created, errno == ENOENT {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
            if !parent.isEmpty, parent != path {
                try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            }
            created = mkdir(path, 0o700) == 0
        }
        if !created {
            let code = errno
            guard code == EEXIST else {
                throw SealedPushError(.io, "cannot create directory \(path): \(errnoText(code))")
            }
            guard try checkDirectory(path) else {
                throw SealedPushError(.io, "cannot create directory \(path): it vanished while being created")
            }
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP || code == ENOTDIR { _ = try checkDirectory(path) }
            throw SealedPushError(.io, "cannot open directory \(path): \(errnoText(code))")
        }
        defer { close(fd) }
        if created {
            // Exactly 0700, whatever the umask took from `mkdir`'s mode.
            guard fchmod(fd, 0o700) == 0 else {
                throw SealedPushError(.io, "cannot set mode 0700 on \(path): \(errnoText(errno))")
            }
            return
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw SealedPushError(.io, "cannot read the mode of \(path): \(errnoText(errno))")
        }
        guard status.st_uid == geteuid() else {
            throw SealedPushError(
                .keyStoreCorrupt,
                "\(path) belongs to another user (uid \(status.st_uid)), who could replace the key files in it: use a "
                    + "directory of your own (a missing one is created with mode 0700)")
        }
        let mode = UInt32(status.st_mode) & 0o7777
        guard mode & 0o022 == 0 else {
            throw SealedPushError(
                .keyStoreCorrupt,
                "\(path) is mode \(String(mode, radix: 8)): others may write to it and replace the key files in it; "
                    + "remove their write access (chmod go-w) or use a new directory (created with mode 0700)")
        }
    }

    /// Reads a whole regular file of at most `limit` bytes.
    ///
    /// The file is opened with `O_NOFOLLOW | O_NONBLOCK` and must be a regular file by `fstat`: a symbolic link, a
    /// FIFO, a device or a directory fails at once with `keyStoreCorrupt` naming the path (a FIFO would otherwise
    /// block the extension until the system kills it), as does a file over `limit` bytes.
    static func read(_ path: String, limit: Int) throws -> ReadResult {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR: return .missing
            case EACCES, EPERM: return .denied(code)
            case ELOOP: throw notRegular(path, "a symbolic link (not followed)")
            default: throw SealedPushError(.io, "cannot open \(path): \(errnoText(code))")
            }
        }
        defer { close(fd) }
        let info = try checkRegular(fd, path)
        if Int(info.st_size) > limit {
            throw SealedPushError(.keyStoreCorrupt, "\(path) is \(info.st_size) bytes, over the \(limit)-byte limit")
        }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glue.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EACCES || code == EPERM { return .denied(code) }
                throw SealedPushError(.io, "cannot read \(path): \(errnoText(code))")
            }
            if count == 0 { break }
            result.append(contentsOf: chunk[0..<count])
            guard result.count <= limit else {
                throw SealedPushError(.keyStoreCorrupt, "\(path) is larger than the \(limit)-byte limit")
            }
        }
        for index in chunk.indices { chunk[index] = 0 }
        return .bytes(result)
    }

    /// Writes `bytes` to `path` atomically: a 0600 temporary file in the same directory, `fsync`, `rename`, then a
    /// directory `fsync`. A reader sees either the old file or the new one, never a partial file.
    static func writeAtomically(
        _ bytes: [UInt8],
        to path: String,
        directory: String,
        beforeRename: BeforeRename? = nil
    ) throws {
        let temporary = path + ".tmp-" + randomSuffix()
        let fd = Glue.createExclusive(temporary)
        guard fd >= 0 else {
            throw SealedPushError(.io, "cannot create \(temporary): \(errnoText(errno))")
        }
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else {
                throw SealedPushError(.io, "cannot set mode 0600 on \(temporary): \(errnoText(errno))")
            }
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { buffer -> Int in
                    guard let base = buffer.baseAddress else { return 0 }
                    return Glue.write(fd, base + offset, buffer.count - offset)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw SealedPushError(.io, "cannot write \(temporary): \(errnoText(errno))")
                }
                guard written > 0 else {
                    throw SealedPushError(.io, "cannot write \(temporary): no progress")
                }
                offset += written
            }
            guard fsync(fd) == 0 else {
                throw SealedPushError(.io, "cannot fsync \(temporary): \(errnoText(errno))")
            }
        }
        try beforeRename?(temporary)
        guard rename(temporary, path) == 0 else {
            throw SealedPushError(.io, "cannot rename \(temporary) to \(path): \(errnoText(errno))")
        }
        renamed = true
        syncDirectory(directory)
    }

    /// Appends `record` to the existing regular file at `path` at `offset` (its end once a torn tail is cut: the
    /// file is first truncated to `offset` if it is longer), then syncs it to stable storage before returning.
    ///
    /// Never follows a symbolic link, never blocks on a FIFO, never creates the file.
    static func append(_ record: [UInt8], at offset: Int, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP { throw notRegular(path, "a symbolic link (not followed)") }
            throw SealedPushError(.io, "cannot open \(path) to append: \(errnoText(code))")
        }
        defer { close(fd) }
        let info = try checkRegular(fd, path)
        if Int(info.st_size) != offset {
            guard ftruncate(fd, off_t(offset)) == 0 else {
                throw SealedPushError(.io, "cannot cut \(path) back to \(offset) bytes: \(errnoText(errno))")
            }
        }
        var written = 0
        while written < record.count {
            let count = record.withUnsafeBytes { buffer in
                pwrite(fd, buffer.baseAddress! + written, buffer.count - written, off_t(offset + written))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw SealedPushError(.io, "cannot append to \(path): \(errnoText(errno))")
            }
            guard count > 0 else { throw SealedPushError(.io, "cannot append to \(path): no progress") }
            written += count
        }
        #if canImport(Darwin)
        let synced = fsync(fd)
        #else
        let synced = fdatasync(fd)
        #endif
        guard synced == 0 else {
            throw SealedPushError(.io, "cannot sync \(path): \(errnoText(errno))")
        }
    }

    /// Fails with `keyStoreCorrupt` unless `fd` is a regular file.
    /// - Returns: Its `fstat`.
    @discardableResult
    static func checkRegular(_ fd: Int32, _ path: String) throws -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SealedPushError(.io, "cannot stat \(path): \(errnoText(errno))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return info
        case S_IFIFO: throw notRegular(path, "a FIFO")
        case S_IFDIR: throw notRegular(path, "a directory")
        case S_IFLNK: throw notRegular(path, "a symbolic link (not followed)")
        default: throw notRegular(path, "a device or socket")
        }
    }

    private static func notRegular(_ path: String, _ what: String) -> SealedPushError {
        SealedPushError(.keyStoreCorrupt, "\(path) is \(what), not a regular file; it was left untouched")
    }

    /// Best-effort `fsync` of a directory so a completed rename survives a power loss.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Removes leftover temporary files (`<name>.tmp-*`) from interrupted writes.
    static func removeStaleTemporaries(named name: String, in directory: String) {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        let prefix = name + ".tmp-"
        var stale: [String] = []
        while let entry = readdir(dir) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if entryName.hasPrefix(prefix) { stale.append(entryName) }
        }
        for entryName in stale {
            unlink(directory + "/" + entryName)
        }
    }

    /// Runs `body` holding an exclusive `flock` on `path` (created 0600 if `create` and missing).
    ///
    /// `flock` locks belong to an open file description, so two threads of one process that each open the lock file
    /// exclude each other, as do the app and its extension. The lock file is opened with `O_NOFOLLOW | O_NONBLOCK`
    /// and must be a regular file: a symbolic link is never created through, a FIFO never blocks.
    static func withExclusiveLock<T>(_ path: String, create: Bool, _ body: () throws -> T) throws -> T {
        let base = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
        let fd = open(path, create ? (base | O_CREAT) : base, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP { throw notRegular(path, "a symbolic link (not followed)") }
            throw SealedPushError(.io, "cannot open lock file \(path): \(errnoText(code))")
        }
        defer { close(fd) }
        try checkRegular(fd, path)
        while flock(fd, LOCK_EX) != 0 {
            let code = errno
            guard code == EINTR else {
                throw SealedPushError(.io, "cannot lock \(path): \(errnoText(code))")
            }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    private static func randomSuffix() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 16)
    }
}
