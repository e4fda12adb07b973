#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushServer

/// Small I/O helpers shared by the subcommands.
enum CLIIO {
    /// Reads a whole file, or standard input when `path` is nil or "-", with a size cap.
    ///
    /// - Parameters:
    ///   - path: The file, or nil or `-` for standard input.
    ///   - limit: The largest acceptable size in bytes.
    ///   - what: The option the file was given with (`--payload`), for the messages.
    /// - Returns: The contents.
    /// - Throws: `SealedPushError` as ``readFile(_:limit:what:)`` does; for standard input, `io` if it cannot be
    ///   read and `invalidArgument` if it is over `limit` bytes.
    static func read(_ path: String?, limit: Int = 1 << 20, what: String) throws -> [UInt8] {
        if let path, path != "-" { return try readFile(path, limit: limit, what: what) }
        let data: Data
        do {
            data = try FileHandle.standardInput.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw SealedPushError(.io, "cannot read standard input (\(what) -): \(error.localizedDescription)")
        }
        guard data.count <= limit else {
            throw SealedPushError(.invalidArgument, "standard input (\(what) -) is larger than \(limit) bytes")
        }
        return Array(data)
    }

    /// Reads a whole regular file of at most `limit` bytes. It is opened non-blocking, so a FIFO or a device fails at
    /// once instead of hanging; a symbolic link to a regular file is followed, as a shell user expects.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - limit: The largest acceptable size in bytes.
    ///   - what: The option the file was given with (`--payload`); every message starts with it and the path.
    /// - Returns: The contents (the caller zeroes a secret's: `--auth-key`).
    /// - Throws: `SealedPushError` with code `io` if the file does not exist, is not readable (permissions), is not a
    ///   regular file (a directory, a FIFO, a device, a socket) or cannot be read; `invalidArgument` if it is over
    ///   `limit` bytes. The message names `what` and `path` and never quotes the contents.
    static func readFile(_ path: String, limit: Int, what: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case ENOENT: throw SealedPushError(.io, "\(what) \(path) does not exist")
            case EACCES, EPERM:
                throw SealedPushError(
                    .io, "\(what) \(path) is not readable (permission denied; check its mode and owner)")
            default: throw SealedPushError(.io, "cannot open \(what) \(path): \(systemMessage(code))")
            }
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw SealedPushError(.io, "cannot inspect \(what) \(path): \(systemMessage(errno))")
        }
        let type = status.st_mode & S_IFMT
        guard type == S_IFREG else {
            let kind: String
            switch type {
            case S_IFDIR: kind = "is a directory, "
            case S_IFIFO: kind = "is a FIFO, "
            case S_IFCHR, S_IFBLK: kind = "is a device, "
            case S_IFSOCK: kind = "is a socket, "
            default: kind = "is "
            }
            throw SealedPushError(.io, "\(what) \(path) \(kind)not a regular file")
        }
        return try KeyFile.readOpened(
            descriptor, path: path, limit: limit,
            tooLarge: SealedPushError(.invalidArgument, "\(what) \(path) is larger than \(limit) bytes"))
    }

    private static func systemMessage(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }

    /// Refuses an output that already exists (a file, or a symbolic link even if it dangles) unless `--force` was
    /// given. The write itself must still refuse to clobber (`KeyFile.writeAtomically(…, replacingExisting: false)`
    /// links the new file into place); this check only says so early, before any work, and names `--force`.
    ///
    /// - Parameters:
    ///   - path: The output path.
    ///   - option: The option that named it (`--out`).
    /// - Throws: `SealedPushError` with code `io` naming `option` and `path` if something is there.
    static func refuseExistingOutput(_ path: String, option: String) throws {
        var status = stat()
        guard lstat(path, &status) != 0 else {
            throw SealedPushError(
                .io, "\(option) \(path) already exists; refusing to overwrite it (--force replaces it)")
        }
    }

    /// Reads a payload and strips one trailing newline (shells add one).
    static func readPayload(_ path: String?, what: String = "--payload") throws -> [UInt8] {
        var bytes = try read(path, limit: 64 * 1024, what: what)
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        return bytes
    }

    static func writeStdout(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func writeStderr(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Parses `--now`: ISO 8601 or UNIX seconds; the current time when nil.
    static func parseNow(_ text: String?) throws -> UInt64 {
        guard let text else { return UInt64(Date().timeIntervalSince1970) }
        if let seconds = UInt64(text) { return seconds }
        let date = try DeviceRegistration.parseDate(text, field: "--now")
        guard date.timeIntervalSince1970 >= 0 else { throw SealedPushError(.invalidArgument, "--now is before 1970") }
        return UInt64(date.timeIntervalSince1970)
    }

    static func iso(_ seconds: UInt64) -> String {
        DeviceRegistration.formatDate(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

/// Runs a command body; on a ``SealedPushError`` prints `error: <code>: <message>` to stderr and exits 1.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as SealedPushError {
        CLIIO.writeStderr("error: \(error.code.name): \(error.message)\n")
        throw ExitCode(1)
    }
}
