#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SealedPushCore

/// The few POSIX calls the blob files need, with `EINTR` retried and failures turned into `io` errors.
enum POSIXBlobIO {
    static func error(_ what: String, _ code: Int32 = errno) -> SealedPushError {
        SealedPushError(.io, "\(what): \(String(cString: strerror(code)))")
    }

    /// Reads into `buffer`; 0 at the end of the file.
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, what: String) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            #if canImport(Darwin)
            let count = Darwin.read(descriptor, base, buffer.count)
            #elseif canImport(Musl)
            let count = Musl.read(descriptor, base, buffer.count)
            #else
            let count = Glibc.read(descriptor, base, buffer.count)
            #endif
            if count >= 0 { return count }
            if errno != EINTR { throw error("cannot read \(what)") }
        }
    }

    /// Reads at `offset` into `buffer`; 0 at the end of the file.
    static func pread(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: Int, what: String) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            #if canImport(Darwin)
            let count = Darwin.pread(descriptor, base, buffer.count, off_t(offset))
            #elseif canImport(Musl)
            let count = Musl.pread(descriptor, base, buffer.count, off_t(offset))
            #else
            let count = Glibc.pread(descriptor, base, buffer.count, off_t(offset))
            #endif
            if count >= 0 { return count }
            if errno != EINTR { throw error("cannot read \(what)") }
        }
    }

    /// Writes all of `bytes`.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, what: String) throws {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            #if canImport(Darwin)
            let written = Darwin.write(descriptor, base + offset, bytes.count - offset)
            #elseif canImport(Musl)
            let written = Musl.write(descriptor, base + offset, bytes.count - offset)
            #else
            let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
            #endif
            if written < 0 {
                if errno == EINTR { continue }
                throw error("cannot write \(what)")
            }
            guard written > 0 else { throw SealedPushError(.io, "cannot write \(what): no progress") }
            offset += written
        }
    }

    /// `fstat`: whether the descriptor is a regular file, and its size and modification time (UNIX seconds).
    static func regularFileInfo(_ descriptor: Int32, what: String) throws -> (size: Int, modified: Double) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw error("cannot stat \(what)") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw SealedPushError(.io, "\(what) is not a regular file") }
        return (Int(info.st_size), modificationTime(info))
    }

    /// `lstat` (never following a symbolic link): the entry's type bits, size and modification time.
    static func lstatInfo(_ path: String) -> (mode: mode_t, size: Int, modified: Double)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_mode & S_IFMT, Int(info.st_size), modificationTime(info))
    }

    static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// The names in a directory (without `.` and `..`).
    static func entries(of path: String) throws -> [String] {
        guard let directory = opendir(path) else { throw error("cannot list \(path)") }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    private static func modificationTime(_ info: stat) -> Double {
        #if canImport(Darwin)
        Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9
        #else
        Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        #endif
    }
}
