#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// A persisted ``ReplayGuard``: `replay-v1.bin` in a directory shared by the app and its extension.
///
/// Each check is one read-modify-write under an exclusive `flock` on `replay.lock`, and the file is replaced
/// atomically (0600 temporary file, `fsync`, `rename`, stale temporaries removed), so the app and the extension can
/// record ids at the same time without losing any, and a crash leaves the previous state. Expired ids are pruned on
/// every write; the set is bounded by ``capacity`` (32 bytes per id on disk). The guard never creates its
/// directory, never follows a symbolic link and never blocks on a FIFO. A corrupt file is reported as
/// `keyStoreCorrupt` and left untouched; ``reset()`` is the explicit recovery and ``state()`` the inspection.
public struct FileReplayGuard: ReplayGuard {
    /// The default capacity: 16,384 ids (≈ 524 KB on disk). When full, the ids issued earliest are evicted, so a
    /// device receiving 5,000 notifications a day still accepts every one issued in the last 3.2 days.
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
    ///   - issuedAt: The envelope's authenticated `issuedAt`, UNIX seconds.
    ///   - expiresAt: The envelope's `expiresAt`, UNIX seconds.
    ///   - now: The current time, UNIX seconds.
    /// - Throws: `SealedPushError` with code `expired`, `notYetValid`, `replayed`, `invalidArgument`,
    ///   `keysUnavailable` (state not readable), `keyStoreCorrupt` (damaged file, a link or FIFO in its place) or
    ///   `io` (directory missing, write failed).
    public func checkAndRecord(messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64) throws {
        let directoryPath = try existingDirectory()
        try POSIXFile.withExclusiveLock(lockPath, create: true) {
            var ledger = try load(now: now)
            if ledger.migrated {
                // Fix the migration time: write the version 2 state before this check can fail.
                try POSIXFile.writeAtomically(ledger.encoded(), to: filePath, directory: directoryPath)
            }
            try ledger.record(messageID: messageID, issuedAt: issuedAt, expiresAt: expiresAt, now: now, capacity: capacity)
            try POSIXFile.writeAtomically(ledger.encoded(), to: filePath, directory: directoryPath)
            POSIXFile.removeStaleTemporaries(named: Self.fileName, in: directoryPath)
        }
    }

    /// Forgets every recorded id (recovery after ``checkAndRecord(messageID:issuedAt:expiresAt:now:)`` reported
    /// `keyStoreCorrupt`, or after an incident). Envelopes opened before and not yet expired could then open once
    /// more.
    ///
    /// - Throws: `SealedPushError` with code `keyStoreCorrupt` (a link or FIFO where the state or lock belongs) or
    ///   `io`.
    public func reset() throws {
        let directoryPath = directory.path
        guard try POSIXFile.checkDirectory(directoryPath) else { return }
        try POSIXFile.withExclusiveLock(lockPath, create: true) {
            // rename replaces whatever is at the path (a damaged file, a link, a FIFO) without touching a target.
            try POSIXFile.writeAtomically(ReplayLedger().encoded(), to: filePath, directory: directoryPath)
            POSIXFile.removeStaleTemporaries(named: Self.fileName, in: directoryPath)
        }
    }

    /// Reads the persisted state without changing it (for `sealed-push device replay-state` and diagnostics).
    ///
    /// - Parameter now: The current time, UNIX seconds (used only to migrate a version 1 file's view).
    /// - Returns: The counters and watermarks; an empty state when no file exists yet.
    /// - Throws: `SealedPushError` with code `keysUnavailable`, `keyStoreCorrupt` or `io`.
    public func state(now: UInt64) throws -> ReplayGuardState {
        _ = try existingDirectory()
        let ledger = try load(now: now)
        return ReplayGuardState(
            count: ledger.entries.count,
            capacity: capacity,
            evictedIssuedAt: ledger.evictedIssuedAt,
            prunedThrough: ledger.prunedThrough,
            latestIssuedAt: ledger.latestIssuedAt,
            earliestIssuedAt: ledger.entries.values.map(\.issuedAt).min(),
            latestExpiresAt: ledger.entries.values.map(\.expiresAt).max())
    }

    private func existingDirectory() throws -> String {
        let directoryPath = directory.path
        guard try POSIXFile.checkDirectory(directoryPath) else {
            throw SealedPushError(.io, "replay guard directory \(directoryPath) does not exist")
        }
        return directoryPath
    }

    private func load(now: UInt64) throws -> ReplayLedger {
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
            return try ReplayLedger(bytes: bytes, now: now)
        }
    }
}
