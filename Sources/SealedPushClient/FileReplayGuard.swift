#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// A persisted ``ReplayGuard``: `replay-v1.bin` in a directory shared by the app and its extension.
///
/// Each check is one read-modify-write under an exclusive `flock` on `replay.lock`, and the file is replaced
/// atomically (0600 temporary file, `fsync`, `rename`), so the app and the extension can record ids at the same
/// time without losing any, and a crash leaves the previous state. Expired ids are pruned on every write; the set
/// is bounded by ``capacity`` (about 24 bytes per id on disk). The guard never creates its directory. A corrupt file
/// is reported as `keyStoreCorrupt` and left untouched; ``reset()`` is the explicit recovery.
public struct FileReplayGuard: ReplayGuard {
    /// The default capacity: 16,384 ids (≈ 393 KB on disk), about 585 notifications a day over the 28-day horizon.
    public static let defaultCapacity = 16_384
    /// The state file's name inside ``directory``.
    public static let fileName = "replay-v1.bin"
    /// The lock file's name inside ``directory``.
    public static let lockFileName = "replay.lock"

    /// The directory holding the state (must exist).
    public let directory: URL
    /// The most message ids kept at once.
    public let capacity: Int

    /// Creates a file replay guard.
    ///
    /// - Parameters:
    ///   - directory: An existing directory (e.g. the key ring directory in the app group container).
    ///   - capacity: The most message ids kept at once.
    public init(directory: URL, capacity: Int = FileReplayGuard.defaultCapacity) {
        self.directory = directory
        self.capacity = capacity
    }

    private var filePath: String { directory.appendingPathComponent(Self.fileName).path }
    private var lockPath: String { directory.appendingPathComponent(Self.lockFileName).path }

    /// Records `messageID` as seen, or rejects it; persists the updated set before returning.
    ///
    /// - Parameters:
    ///   - messageID: The 16-byte message id.
    ///   - expiresAt: The envelope's `expiresAt`, UNIX seconds.
    ///   - now: The current time, UNIX seconds.
    /// - Throws: `SealedPushError` with code `expired`, `replayed`, `invalidArgument`, `keysUnavailable` (state not
    ///   readable), `keyStoreCorrupt` or `io` (directory missing, write failed).
    public func checkAndRecord(messageID: [UInt8], expiresAt: UInt64, now: UInt64) throws {
        let directoryPath = directory.path
        guard POSIXFile.isDirectory(directoryPath) else {
            throw SealedPushError(.io, "replay guard directory \(directoryPath) does not exist")
        }
        try POSIXFile.withExclusiveLock(lockPath, create: true) {
            var ledger = try load()
            try ledger.record(messageID: messageID, expiresAt: expiresAt, now: now, capacity: capacity)
            try POSIXFile.writeAtomically(ledger.encoded(), to: filePath, directory: directoryPath)
        }
    }

    /// Forgets every recorded id (recovery after ``checkAndRecord(messageID:expiresAt:now:)`` reported
    /// `keyStoreCorrupt`). Envelopes opened before and not yet expired could then open once more.
    ///
    /// - Throws: `SealedPushError` with code `io`.
    public func reset() throws {
        let directoryPath = directory.path
        guard POSIXFile.isDirectory(directoryPath) else { return }
        try POSIXFile.withExclusiveLock(lockPath, create: true) {
            try POSIXFile.writeAtomically(ReplayLedger().encoded(), to: filePath, directory: directoryPath)
        }
    }

    private func load() throws -> ReplayLedger {
        let limit = ReplayLedger.headerLength + ReplayLedger.entryLength * (max(capacity, 1) + 1) + (1 << 20)
        switch try POSIXFile.read(filePath, limit: limit) {
        case .missing:
            return ReplayLedger()
        case .denied(let code):
            throw SealedPushError(
                .keysUnavailable,
                "replay state at \(filePath) is not readable (\(POSIXFile.errnoText(code)))"
            )
        case .bytes(let bytes):
            return try ReplayLedger(bytes: bytes)
        }
    }
}
