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

    /// Whether `path` exists and is a directory.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether anything exists at `path` (without following a final symlink).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Creates `path` with mode 0700 if missing (missing parents are created with the default mode), and tightens an
    /// existing directory to 0700.
    static func ensurePrivateDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0, errno == ENOENT {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
            if !parent.isEmpty, parent != path {
                try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            }
        }
        if mkdir(path, 0o700) != 0 {
            let code = errno
            guard code == EEXIST, isDirectory(path) else {
                throw SealedPushError(.io, "cannot create directory \(path): \(errnoText(code))")
            }
        }
        guard chmod(path, 0o700) == 0 else {
            throw SealedPushError(.io, "cannot set mode 0700 on \(path): \(errnoText(errno))")
        }
    }

    /// Reads a whole file of at most `limit` bytes.
    static func read(_ path: String, limit: Int) throws -> ReadResult {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR: return .missing
            case EACCES, EPERM: return .denied(code)
            default: throw SealedPushError(.io, "cannot open \(path): \(errnoText(code))")
            }
        }
        defer { close(fd) }
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
                throw SealedPushError(.io, "\(path) is larger than the \(limit)-byte limit")
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
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
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
    /// exclude each other, as do the app and its extension.
    static func withExclusiveLock<T>(_ path: String, create: Bool, _ body: () throws -> T) throws -> T {
        let flags = create ? (O_RDWR | O_CREAT | O_CLOEXEC) : (O_RDWR | O_CLOEXEC)
        let fd = open(path, flags, 0o600)
        guard fd >= 0 else {
            let code = errno
            throw SealedPushError(.io, "cannot open lock file \(path): \(errnoText(code))")
        }
        defer { close(fd) }
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

/// Unambiguous names for the libc `read`/`write` calls (the enum has members of the same names).
private enum Glue {
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #elseif canImport(Musl)
        Musl.read(fd, buffer, count)
        #else
        Darwin.read(fd, buffer, count)
        #endif
    }

    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, buffer, count)
        #elseif canImport(Musl)
        Musl.write(fd, buffer, count)
        #else
        Darwin.write(fd, buffer, count)
        #endif
    }
}
