#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SealedPushCore

/// Small POSIX file helpers for key files: atomic 0600 writes (temporary file in the same directory, `fsync`,
/// rename or link, directory `fsync`) and bounded reads.
package enum KeyFile {
    /// Writes `bytes` to `path` atomically with mode 0600: a reader sees the old file or the new one, never a
    /// partial one, and no temporary file is left behind on success or failure.
    ///
    /// - Parameters:
    ///   - bytes: The file contents.
    ///   - path: The target path.
    ///   - replacingExisting: `true` renames over an existing file; `false` fails if `path` exists (the new file
    ///     is linked into place, which is atomic and never clobbers).
    /// - Throws: `SealedPushError` with code `io`, naming the path and the system error.
    package static func writeAtomically(_ bytes: [UInt8], toPath path: String, replacingExisting: Bool) throws {
        let directory = directoryName(of: path)
        let suffix = Sodium.randomBytes(count: 8).map { String($0, radix: 16) }.joined()
        let temporary = directory + "/." + temporaryStem(of: baseName(of: path)) + ".tmp-" + suffix

        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw ioError("cannot create a temporary file in \(directory)") }
        var linked = false
        defer {
            if !linked { unlink(temporary) }
        }
        var closed = false
        defer {
            if !closed { close(descriptor) }
        }
        guard fchmod(descriptor, 0o600) == 0 else { throw ioError("cannot set mode 0600 on \(temporary)") }
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                guard let base = buffer.baseAddress else { break }
                let written = write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw ioError("cannot write \(temporary)")
                }
                offset += written
            }
        }
        guard fsync(descriptor) == 0 else { throw ioError("cannot fsync \(temporary)") }
        closed = true
        guard close(descriptor) == 0 else { throw ioError("cannot close \(temporary)") }

        if replacingExisting {
            guard rename(temporary, path) == 0 else { throw ioError("cannot rename \(temporary) to \(path)") }
            linked = true
        } else {
            if link(temporary, path) == 0 {
                unlink(temporary)
            } else if errno == EEXIST {
                throw SealedPushError(.io, "\(path) already exists; refusing to overwrite a key file")
            } else if errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOSYS {
                // A file system without hard links: fall back to check-then-rename (still never partial).
                guard access(path, F_OK) != 0 else {
                    throw SealedPushError(.io, "\(path) already exists; refusing to overwrite a key file")
                }
                guard rename(temporary, path) == 0 else { throw ioError("cannot rename \(temporary) to \(path)") }
            } else {
                throw ioError("cannot link \(temporary) to \(path)")
            }
            linked = true
        }
        syncDirectory(directory)
    }

    /// Reads at most `limit` bytes from `path`.
    ///
    /// - Parameters:
    ///   - path: The file to read.
    ///   - limit: The largest acceptable file size.
    /// - Returns: The contents.
    /// - Throws: `SealedPushError` with code `io` if the file cannot be read or is not a regular file (a FIFO or
    ///   device would block or never end), `invalidKey` if it is longer than `limit` (not a key file).
    package static func read(path: String, limit: Int) throws -> [UInt8] {
        // O_NONBLOCK: opening a FIFO without a writer must not hang; the file type is checked right after.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw ioError("cannot open \(path)") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ioError("cannot stat \(path)") }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw SealedPushError(.io, "\(path) is not a regular file")
        }
        return try read(descriptor, path: path, limit: limit, what: nil)
    }

    /// Reads a secret file (a webhook secret, a proxy's credentials, an FCM service account) that only its owner may
    /// read: opened without following a symbolic link, a regular file, no permission for group or others.
    ///
    /// - Parameters:
    ///   - path: The file to read.
    ///   - limit: The largest acceptable file size.
    ///   - what: What the file is, for the messages (a setting or an option: `delivery.webhook.secretFile`).
    /// - Returns: The contents (the caller zeroes them).
    /// - Throws: `SealedPushError` `io` naming `what` and the path: missing, a link, not a regular file, readable by
    ///   others (with its mode and `chmod 600`), unreadable, or over `limit` bytes.
    package static func readPrivate(path: String, limit: Int, what: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: throw SealedPushError(.io, "\(what) \(path) does not exist")
            case ELOOP: throw SealedPushError(.io, "\(what) \(path) must be a regular file, not a link")
            default: throw SealedPushError(.io, "cannot open \(what) \(path): \(String(cString: strerror(errno)))")
            }
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw SealedPushError(.io, "\(what) \(path) must be a regular file, not a link")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw SealedPushError(
                .io,
                "\(what) \(path) is readable by others (mode \(String(status.st_mode & 0o777, radix: 8))): "
                    + "chmod 600 it")
        }
        return try read(descriptor, path: path, limit: limit, what: what)
    }

    /// The contents of an open regular file, at most `limit` bytes; past it, `invalidKey` naming `what` (a secret
    /// file) or saying it is no key file.
    private static func read(_ descriptor: Int32, path: String, limit: Int, what: String?) throws -> [UInt8] {
        try readOpened(
            descriptor, path: path, limit: limit,
            tooLarge: SealedPushError(
                .invalidKey,
                what.map { "\($0) \(path) is over \(limit) bytes" }
                    ?? "\(path) is longer than \(limit) bytes: not a SealedPush key file"))
    }

    /// The contents of a regular file the caller opened (and checked), read to its end: at most `limit` bytes, else
    /// `tooLarge`. The buffer is zeroed on every path, so a secret's bytes are not left behind.
    ///
    /// - Parameters:
    ///   - descriptor: The open file.
    ///   - path: Its path, for the messages.
    ///   - limit: The largest acceptable size.
    ///   - tooLarge: The error for a file over `limit` bytes.
    /// - Returns: The contents (the caller zeroes a secret's).
    /// - Throws: `tooLarge`, or `SealedPushError` `io` if a read fails.
    package static func readOpened(
        _ descriptor: Int32, path: String, limit: Int, tooLarge: @autoclosure () -> SealedPushError
    ) throws -> [UInt8] {
        var contents = [UInt8](repeating: 0, count: limit + 1)
        var total = 0
        while total < contents.count {
            let count = contents.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return readSome(descriptor, base + total, buffer.count - total)
            }
            if count < 0 {
                if errno == EINTR { continue }
                Sodium.wipe(&contents)
                throw ioError("cannot read \(path)")
            }
            if count == 0 { break }
            total += count
        }
        guard total <= limit else {
            Sodium.wipe(&contents)
            throw tooLarge()
        }
        let result = Array(contents[0..<total])
        Sodium.wipe(&contents)
        return result
    }

    private static func readSome(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        #if canImport(Darwin)
        Darwin.read(descriptor, buffer, count)
        #elseif canImport(Musl)
        Musl.read(descriptor, buffer, count)
        #else
        Glibc.read(descriptor, buffer, count)
        #endif
    }

    /// `fsync` on the directory so the rename itself is durable; best effort (some file systems refuse it).
    private static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_CLOEXEC | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    static func directoryName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    static func baseName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// The file name a temporary file starts with: `name` cut to at most 233 bytes of UTF-8 (at a character
    /// boundary), so that `.<stem>.tmp-<16 hex>` stays within `NAME_MAX` (255) for every name the target may have.
    ///
    /// - Parameter name: The target's file name.
    /// - Returns: `name`, or its longest prefix of whole characters within 233 bytes.
    static func temporaryStem(of name: String) -> String {
        let limit = 255 - ".".utf8.count - ".tmp-".utf8.count - 16
        guard name.utf8.count > limit else { return name }
        var stem = ""
        var bytes = 0
        for scalar in name.unicodeScalars {
            let size = String(scalar).utf8.count
            guard bytes + size <= limit else { break }
            stem.unicodeScalars.append(scalar)
            bytes += size
        }
        return stem
    }

    private static func ioError(_ what: String) -> SealedPushError {
        let code = errno
        let reason = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return SealedPushError(.io, "\(what): \(reason)")
    }
}
