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

/// Decrypts an attachment into a file as its bytes arrive (`Specs/blob-v1.md` §5, §7).
///
/// The file is created in a directory the caller gives (the app group's container), exclusively, mode 0600, never
/// through a symbolic link, under a random name; only verified chunks are written. ``finish()`` gives it its final
/// name with the extension `UNNotificationAttachment` needs (`jpg`, `png`, `m4a`, `mp4`, …) and returns its URL.
/// On **every** failure — a blob error, the size cap, a write error, ``cancel()``, or the opener being dropped
/// unfinished — the partial file is deleted before the error is reported.
///
/// `append`, `finish` and `cancel` may be called from different threads (a download task and the extension's
/// expiry callback); they are serialized.
///
/// ```swift
/// let file = try BlobFileOpener(attachment: descriptor, directory: containerURL)
/// for try await piece in download { try file.append(piece) }   // verifies each chunk as it completes
/// let url = try file.finish()                                  // …/3f9c….jpg
/// ```
public final class BlobFileOpener: @unchecked Sendable {
    /// Where the file will be once finished.
    public let finalURL: URL
    private let partialPath: String
    private let lock = ClientLock()
    private let opener: BlobOpener
    private var descriptor: Int32
    private var state = State.open

    private enum State { case open, finished, failed }

    /// Starts decrypting into a new file.
    ///
    /// - Parameters:
    ///   - key: The 32-byte blob key.
    ///   - plaintextSize: The declared size.
    ///   - maxPlaintextSize: The cap; a larger declared size fails before a file is created.
    ///   - directory: An existing directory to write into.
    ///   - fileExtension: The final file's extension without the dot (1 ... 16 ASCII letters or digits).
    /// - Throws: `blobTooLarge`, `invalidKey`, `invalidArgument` for a bad extension, `io` if the file cannot be
    ///   created.
    public init(
        key: [UInt8], plaintextSize: Int, maxPlaintextSize: Int, directory: URL, fileExtension: String
    ) throws {
        let extensionBytes = Array(fileExtension.utf8)
        guard (1...16).contains(extensionBytes.count),
            extensionBytes.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) })
        else {
            throw SealedPushError(.invalidArgument, "a file extension is 1...16 ASCII letters or digits")
        }
        opener = try BlobOpener(key: key, plaintextSize: plaintextSize, maxPlaintextSize: maxPlaintextSize)
        var generator = SystemRandomNumberGenerator()
        let stem = (0..<2).map { _ in
            let value: UInt64 = generator.next()
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
        let directoryPath = directory.path
        finalURL = directory.appendingPathComponent(stem + "." + fileExtension)
        partialPath = directoryPath + "/." + stem + ".partial"
        descriptor = Glue.createExclusive(partialPath)
        guard descriptor >= 0 else {
            let code = errno
            throw SealedPushError(
                .io, "cannot create a file for the attachment in \(directoryPath): \(String(cString: strerror(code)))")
        }
        // Held until the file is renamed or deleted: a process killed mid-download (iOS ends extensions with
        // SIGKILL) releases it, which is how ``removeAbandonedPartialFiles(in:)`` tells its leftovers from live
        // downloads.
        _ = flock(descriptor, LOCK_EX | LOCK_NB)
    }

    /// Deletes the partial files of downloads whose process died (a killed extension) from `directory`.
    ///
    /// A partial file is decrypted plaintext that never got its final name. Each ``BlobFileOpener`` holds an
    /// exclusive `flock` on its partial file while it is open, so a file whose lock can be taken, and that is more
    /// than a second old, belongs to no live download in any process. The notification service step calls this before
    /// each run's attachments; an app may call it too (for example when it starts).
    /// - Parameter directory: The attachments directory.
    /// - Returns: How many leftover files were deleted.
    @discardableResult
    public static func removeAbandonedPartialFiles(in directory: URL) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return 0 }
        let hex = Set("0123456789abcdef".utf8)
        var removed = 0
        for name in names {
            let bytes = Array(name.utf8)
            guard bytes.count == 1 + 32 + 8, bytes.first == UInt8(ascii: "."), name.hasSuffix(".partial"),
                bytes[1...32].allSatisfy(hex.contains)
            else { continue }
            let path = directory.path + "/" + name
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            #if canImport(Darwin)
            let changed = Double(info.st_ctimespec.tv_sec) + Double(info.st_ctimespec.tv_nsec) / 1e9
            #else
            let changed = Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec) / 1e9
            #endif
            let now = Date().timeIntervalSince1970
            guard now - changed >= 1, flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            if unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    /// Starts decrypting an attachment: its key and declared size, the cap of its kind and the extension of its
    /// media type.
    ///
    /// - Parameters:
    ///   - attachment: The parsed descriptor.
    ///   - directory: An existing directory to write into.
    ///   - maxPlaintextSize: A cap of the app's own, if lower than the kind's (Apple's) cap.
    /// - Throws: As ``init(key:plaintextSize:maxPlaintextSize:directory:fileExtension:)``.
    public convenience init(attachment: AttachmentDescriptor, directory: URL, maxPlaintextSize: Int? = nil) throws {
        try self.init(
            key: attachment.blob.key, plaintextSize: attachment.blob.size,
            maxPlaintextSize: min(maxPlaintextSize ?? .max, attachment.mediaType.kind.maxSize), directory: directory,
            fileExtension: attachment.mediaType.fileExtension)
    }

    deinit {
        if state == .open { discard() }
    }

    /// The blob bytes accepted so far.
    public var receivedByteCount: Int { lock.withLock { opener.receivedByteCount } }

    /// The blob's exact length (what a download should expect, whatever `Content-Length` says).
    public var ciphertextSize: Int { opener.ciphertextSize }

    /// Accepts the next downloaded bytes; verified chunks are written to the file.
    ///
    /// - Parameter bytes: The next bytes (`Data`, `[UInt8]`, …), any length.
    /// - Throws: A blob error code of `Specs/blob-v1.md` §8 or `io`; the partial file is gone when it is thrown.
    public func append(_ bytes: some ContiguousBytes) throws {
        try lock.withLock {
            try checkOpen()
            do {
                try bytes.withUnsafeBytes { buffer in
                    try opener.append(buffer) { plaintext in
                        try writeAll(plaintext)
                    }
                }
            } catch {
                discard()
                throw error
            }
        }
    }

    /// Ends the download: checks that the whole blob arrived and gives the file its final name.
    ///
    /// - Returns: The decrypted file's URL (in the caller's directory, with the media type's extension).
    /// - Throws: `blobTruncated` or `io`; the partial file is gone when it is thrown.
    public func finish() throws -> URL {
        try lock.withLock {
            try checkOpen()
            do {
                try opener.finish()
                // Renamed while the descriptor (and its lock) is still held, so no cleanup takes it for a leftover.
                guard rename(partialPath, finalURL.path) == 0 else {
                    throw Self.ioError("cannot move the attachment file into place")
                }
                let status = close(descriptor)
                descriptor = -1
                state = .finished
                guard status == 0 else {
                    unlink(finalURL.path)
                    throw Self.ioError("cannot close the attachment file")
                }
                return finalURL
            } catch {
                discard()
                throw error
            }
        }
    }

    /// Abandons the download (a deadline, the extension's expiry, a cancelled task) and deletes the partial file.
    /// Safe to call at any time and more than once; a finished file is left alone.
    public func cancel() {
        lock.withLock {
            if state == .open { discard() }
        }
    }

    private func checkOpen() throws {
        switch state {
        case .open: return
        case .finished: throw SealedPushError(.invalidArgument, "the attachment file is already finished")
        case .failed: throw SealedPushError(.invalidArgument, "the attachment download already failed or was cancelled")
        }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Glue.write(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.ioError("cannot write the attachment file")
            }
            guard written > 0 else { throw SealedPushError(.io, "cannot write the attachment file: no progress") }
            offset += written
        }
    }

    private func discard() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        unlink(partialPath)
        state = .failed
    }

    private static func ioError(_ what: String) -> SealedPushError {
        let code = errno
        return SealedPushError(.io, "\(what): \(String(cString: strerror(code)))")
    }
}
