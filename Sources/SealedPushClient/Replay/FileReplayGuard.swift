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
/// every write; the set is bounded by ``capacity`` (56 bytes per id on disk: the id, its envelope's times, when it
/// was accepted and the envelope's digest, so an exact copy within ``duplicateWindow`` is a duplicate). The guard
/// never creates its directory, never follows a symbolic link and never blocks on a FIFO. A corrupt file is reported as
/// `keyStoreCorrupt` and left untouched; ``reset()`` is the explicit recovery and ``state()`` the inspection.
public struct FileReplayGuard: ReplayGuard {
    /// The default capacity: 16,384 ids (≈ 918 KB on disk). When full, the ids issued earliest are evicted, so a
    /// device receiving 5,000 notifications a day still accepts every one issued in the last 3.2 days.
    public static let defaultCapacity = 16_384
    /// The default duplicate window: 600 seconds (`Specs/keyring-v1.md` §5.5 says why).
    public static let defaultDuplicateWindow: UInt64 = 600
    /// The state file's name inside ``directory``.
    public static let fileName = "replay-v1.bin"
    /// The lock file's name inside ``directory``.
    public static let lockFileName = "replay.lock"

    /// The directory holding the state (must exist).
    public let directory: URL
    /// The most message ids kept at once.
    public let capacity: Int
    /// How long after its first acceptance (device time, seconds) an exact copy of an envelope is a duplicate
    /// rather than a replay; 0 turns duplicate detection off.
    public let duplicateWindow: UInt64

    /// Creates a file replay guard.
    ///
    /// - Parameters:
    ///   - directory: An existing directory (e.g. the key ring directory in the app group container).
    ///   - capacity: The most message ids kept at once.
    ///   - duplicateWindow: The duplicate window in seconds (default 600; 0 for none).
    public init(
        directory: URL, capacity: Int = FileReplayGuard.defaultCapacity,
        duplicateWindow: UInt64 = FileReplayGuard.defaultDuplicateWindow
    ) {
        self.directory = directory
        self.capacity = capacity
        self.duplicateWindow = duplicateWindow
    }

    private var filePath: String { directory.appendingPathComponent(Self.fileName).path }
    private var lockPath: String { directory.appendingPathComponent(Self.lockFileName).path }

    /// Records `messageID` as seen, or rejects it; persists the updated set before returning. Ids recorded this way
    /// are never taken for duplicates.
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
        _ = try decide(messageID: messageID, digest: nil, issuedAt: issuedAt, expiresAt: expiresAt, now: now)
    }

    /// Records `messageID` with the envelope's digest and `now`, finds the envelope an exact duplicate of one
    /// accepted within ``duplicateWindow``, or rejects it; persists any change before returning.
    ///
    /// - Parameters:
    ///   - messageID: The 16-byte message id.
    ///   - envelopeDigest: ``EnvelopeDigest/of(_:)`` of the binary envelope.
    ///   - issuedAt: The envelope's authenticated `issuedAt`, UNIX seconds.
    ///   - expiresAt: The envelope's `expiresAt`, UNIX seconds.
    ///   - now: The current time, UNIX seconds.
    /// - Returns: ``ReplayVerdict/first`` or ``ReplayVerdict/duplicate(firstAcceptedAt:)``.
    /// - Throws: `SealedPushError` as ``checkAndRecord(messageID:issuedAt:expiresAt:now:)``.
    public func checkAndRecord(
        messageID: [UInt8], envelopeDigest: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64
    ) throws -> ReplayVerdict {
        try decide(messageID: messageID, digest: envelopeDigest, issuedAt: issuedAt, expiresAt: expiresAt, now: now)
    }

    private func decide(
        messageID: [UInt8], digest: [UInt8]?, issuedAt: UInt64, expiresAt: UInt64, now: UInt64
    ) throws -> ReplayVerdict {
        let directoryPath = try existingDirectory()
        return try POSIXFile.withExclusiveLock(lockPath, create: true) {
            var ledger = try load(now: now)
            if ledger.migrated {
                // Fix the migration time: write the current version before this check can fail.
                try POSIXFile.writeAtomically(ledger.encoded(), to: filePath, directory: directoryPath)
            }
            let decision = try ledger.check(
                messageID: messageID, digest: digest, issuedAt: issuedAt, expiresAt: expiresAt, now: now,
                capacity: capacity, window: duplicateWindow)
            switch decision {
            case .duplicate(let firstAcceptedAt):
                return .duplicate(firstAcceptedAt: firstAcceptedAt)  // nothing changed: no write
            case .refused(let error, let changed):
                // A window that closed is persisted, so a clock set back later cannot reopen it.
                if changed { try write(ledger, in: directoryPath) }
                throw error
            case .recorded:
                try write(ledger, in: directoryPath)
                return .first
            }
        }
    }

    private func write(_ ledger: ReplayLedger, in directoryPath: String) throws {
        try POSIXFile.writeAtomically(ledger.encoded(), to: filePath, directory: directoryPath)
        POSIXFile.removeStaleTemporaries(named: Self.fileName, in: directoryPath)
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
            latestAcceptedAt: ledger.latestAcceptedAt,
            duplicateWindow: duplicateWindow,
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
