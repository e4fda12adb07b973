#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// A ``KeyStore`` keeping the key ring in one file, `keyring.json`, inside a private directory.
///
/// - The directory is created with mode 0700 (read-write access only); the file is written with mode 0600 to a
///   temporary file in the same directory, `fsync`ed and renamed over the old one, so a crash leaves either the
///   old or the new key ring, never a partial one. Writers take an exclusive `flock` on `keyring.lock`.
/// - A file that is present but invalid is reported as `keyStoreCorrupt` and left untouched — never regenerated.
/// - With ``Access/readOnly`` (the notification service extension) the store never creates, locks or writes
///   anything: a missing directory, a missing file or a permission error (e.g. before first unlock) is reported as
///   `keysUnavailable`.
public struct FileKeyStore: KeyStore {
    /// How the store may touch the disk.
    public enum Access: Sendable, Hashable {
        /// The app: may create the directory and write the key ring.
        case readWrite
        /// The extension: reads only; never creates, rotates or rewrites.
        case readOnly
    }

    /// The key ring file's name inside ``directory``.
    public static let fileName = "keyring.json"
    /// The lock file's name inside ``directory`` (created by read-write stores only).
    public static let lockFileName = "keyring.lock"

    /// The directory holding the key ring.
    public let directory: URL
    /// The access mode.
    public let access: Access
    /// Test hook run between the synced temporary file and the rename.
    var beforeRename: POSIXFile.BeforeRename?

    /// Whether this store refuses every write.
    public var isReadOnly: Bool { access == .readOnly }

    /// Creates a file key store.
    ///
    /// - Parameters:
    ///   - directory: The directory holding `keyring.json` (for an app and its extension, a folder in the shared
    ///     app group container).
    ///   - access: ``Access/readWrite`` for the app, ``Access/readOnly`` for the extension.
    public init(directory: URL, access: Access) {
        self.directory = directory
        self.access = access
    }

    private var directoryPath: String { directory.path }
    private var filePath: String { directory.appendingPathComponent(Self.fileName).path }

    /// Loads the key ring.
    ///
    /// - Returns: The key ring, or nil when a read-write store has none yet.
    /// - Throws: `SealedPushError` with code `keysUnavailable` (read-only: directory or file missing; any access:
    ///   permission denied), `keyStoreCorrupt` or `io`.
    public func loadKeyRing() throws -> DeviceKeyRing? {
        guard try POSIXFile.checkDirectory(directoryPath) else {
            if isReadOnly {
                throw SealedPushError(.keysUnavailable, "key ring directory \(directoryPath) does not exist or is not readable")
            }
            return nil
        }
        switch try POSIXFile.read(filePath, limit: DeviceKeyRing.maxFileBytes) {
        case .missing:
            if isReadOnly {
                throw SealedPushError(.keysUnavailable, "no key ring at \(filePath); the app must create it first")
            }
            return nil
        case .denied(let code):
            throw SealedPushError(
                .keysUnavailable,
                "key ring at \(filePath) is not readable (\(POSIXFile.errnoText(code))); "
                    + "the device may not have been unlocked since boot"
            )
        case .bytes(var bytes):
            defer { EnvelopeOpener.wipe(&bytes) }
            return try DeviceKeyRing(fileBytes: bytes)
        }
    }

    /// Atomically reads, transforms and writes back the key ring under an exclusive lock.
    ///
    /// - Parameter body: Receives the current key ring (nil if none) and may replace it.
    /// - Returns: What `body` returns.
    /// - Throws: `SealedPushError` with code `invalidArgument` (read-only store), `keyStoreCorrupt`, `io`, or what
    ///   `body` throws (then nothing is written).
    public func update<T>(_ body: (inout DeviceKeyRing?) throws -> T) throws -> T {
        guard !isReadOnly else {
            throw SealedPushError(.invalidArgument, "the key store at \(directoryPath) is read-only (extension side)")
        }
        let createsDirectory = !FileManager.default.fileExists(atPath: directoryPath)
        try POSIXFile.ensurePrivateDirectory(directoryPath)
        let lockPath = directory.appendingPathComponent(Self.lockFileName).path
        do {
            return try locked(lockPath, body)
        } catch {
            // A directory made for this update and left without a key ring (rotating or pruning a ring that does
            // not exist) is removed again, lock file and all: a failed command leaves nothing behind.
            if createsDirectory, !FileManager.default.fileExists(atPath: filePath) {
                try? FileManager.default.removeItem(atPath: lockPath)
                if (try? FileManager.default.contentsOfDirectory(atPath: directoryPath))?.isEmpty == true {
                    try? FileManager.default.removeItem(atPath: directoryPath)
                }
            }
            throw error
        }
    }

    private func locked<T>(_ lockPath: String, _ body: (inout DeviceKeyRing?) throws -> T) throws -> T {
        try POSIXFile.withExclusiveLock(lockPath, create: true) {
            let before = try loadKeyRing()
            var ring = before
            let result = try body(&ring)
            if let ring, ring.fingerprint != before?.fingerprint {
                var bytes = ring.fileBytes()
                defer { EnvelopeOpener.wipe(&bytes) }
                // A writer never writes what a reader refuses (the app could not open, rotate or prune again).
                guard bytes.count <= DeviceKeyRing.maxFileBytes else {
                    throw SealedPushError(
                        .invalidArgument,
                        "the key ring would be \(bytes.count) bytes, over the \(DeviceKeyRing.maxFileBytes)-byte limit "
                            + "readers accept (\(ring.keys.count) keys); prune retired keys first")
                }
                try POSIXFile.writeAtomically(bytes, to: filePath, directory: directoryPath, beforeRename: beforeRename)
                POSIXFile.removeStaleTemporaries(named: Self.fileName, in: directoryPath)
            } else if ring == nil, before != nil {
                throw SealedPushError(.invalidArgument, "a key ring cannot be deleted through update")
            }
            return result
        }
    }
}

extension DeviceKeyRing {
    /// Identity of the ring's state for change detection: ids and retirement times in order.
    var fingerprint: [String] {
        keys.map { "\($0.keyID.hex):\($0.createdAt):\($0.retiredAt.map(String.init) ?? "-")" }
    }
}
