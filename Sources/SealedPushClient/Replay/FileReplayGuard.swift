#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// A persisted ``ReplayGuard``: `replay-v1.bin` in a directory shared by the app and its extension.
///
/// The file is a snapshot followed by a journal (`Specs/keyring-v1.md` §5, version 4). Each check holds an exclusive
/// `flock` on `replay.lock`, reads the file, looks the id up (binary search in the snapshot, then the journal), and,
/// when it records the id, appends one 64-byte record and syncs it before returning — so the app and the extension
/// can record ids at the same time without losing any, and a crash at any byte loses no id whose check returned.
/// Every ``journalLimit`` records the state is compacted: expired ids pruned, the set bounded by ``capacity``, and a
/// new snapshot written atomically (0600 temporary file, `fsync`, `rename`, stale temporaries removed). The guard
/// never creates its directory, never follows a symbolic link and never blocks on a FIFO. A corrupt file is reported
/// as `keyStoreCorrupt` and left untouched; ``reset()`` is the explicit recovery and ``state(now:)`` the inspection.
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
    /// The default journal length at which the state is compacted: 1,024 records (at full capacity that is 960
    /// bytes written per recorded id, amortised).
    public static let defaultJournalLimit = ReplayLedger.defaultJournalLimit

    /// The directory holding the state (must exist).
    public let directory: URL
    /// The most message ids kept at once.
    public let capacity: Int
    /// How long after its first acceptance (device time, seconds) an exact copy of an envelope is a duplicate
    /// rather than a replay; 0 turns duplicate detection off.
    public let duplicateWindow: UInt64
    /// How many journal records trigger a compaction (1 ... 8,192).
    public let journalLimit: Int

    /// Creates a file replay guard.
    ///
    /// - Parameters:
    ///   - directory: An existing directory (e.g. the key ring directory in the app group container).
    ///   - capacity: The most message ids kept at once.
    ///   - duplicateWindow: The duplicate window in seconds (default 600; 0 for none).
    ///   - journalLimit: How many journal records trigger a compaction (default 1,024; clamped to 1 ... 8,192).
    public init(
        directory: URL, capacity: Int = FileReplayGuard.defaultCapacity,
        duplicateWindow: UInt64 = FileReplayGuard.defaultDuplicateWindow,
        journalLimit: Int = FileReplayGuard.defaultJournalLimit
    ) {
        self.directory = directory
        self.capacity = capacity
        self.duplicateWindow = duplicateWindow
        self.journalLimit = min(max(journalLimit, 1), ReplayLedger.maximumJournalLimit)
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
            var file = try load(now: now)
            if file.olderVersion != nil {
                // Fix the migration: write the current version before this check can fail (§5.4.4).
                var ledger = file.ledger()
                ledger.compact(now: now, capacity: capacity)
                file = try ReplayStateFile(bytes: writeSnapshot(ledger, in: directoryPath), now: now)
            }
            let ruling = try ReplayLedger.rule(
                messageID: messageID, digest: digest, issuedAt: issuedAt, expiresAt: expiresAt, now: now,
                window: duplicateWindow, marks: file.marks, existing: { file.entry(for: $0) })
            switch ruling {
            case .duplicate(let firstAcceptedAt):
                return .duplicate(firstAcceptedAt: firstAcceptedAt)  // nothing changed: no write
            case .refused(let error, let close):
                // A window that closed is persisted, so a clock set back later cannot reopen it.
                if close {
                    try record(ReplayJournalRecord(messageID: messageID, change: .close), on: &file, now: now,
                               in: directoryPath)
                }
                throw error
            case .record(let entry):
                try record(ReplayJournalRecord(messageID: messageID, change: .add(entry)), on: &file, now: now,
                           in: directoryPath)
                return .first
            }
        }
    }

    /// Appends `record` (synced before this returns), or compacts when the journal reaches ``journalLimit`` or
    /// there is no file yet.
    private func record(
        _ record: ReplayJournalRecord, on file: inout ReplayStateFile, now: UInt64, in directoryPath: String
    ) throws {
        file.apply(record)
        if file.bytes.isEmpty || file.journalCount >= journalLimit {
            var ledger = file.ledger()
            ledger.compact(now: now, capacity: capacity)
            try writeSnapshot(ledger, in: directoryPath)
        } else {
            try POSIXFile.append(record.encoded(), at: file.appendOffset, to: filePath)
        }
    }

    /// Writes `ledger` as a snapshot with no journal. - Returns: the bytes written.
    @discardableResult
    private func writeSnapshot(_ ledger: ReplayLedger, in directoryPath: String) throws -> [UInt8] {
        let bytes = ledger.encoded()
        try POSIXFile.writeAtomically(bytes, to: filePath, directory: directoryPath)
        POSIXFile.removeStaleTemporaries(named: Self.fileName, in: directoryPath)
        return bytes
    }

    /// Forgets every recorded id (recovery after ``checkAndRecord(messageID:issuedAt:expiresAt:now:)`` reported
    /// `keyStoreCorrupt`, or after an incident). Envelopes opened before and not yet expired could then open once
    /// more.
    ///
    /// - Throws: `SealedPushError` with code `io` if ``directory`` does not exist (nothing was reset, so this is not
    ///   reported as done; the directory is not created), `keyStoreCorrupt` (a link or FIFO where the directory, the
    ///   state or the lock belongs), or `io`.
    public func reset() throws {
        let directoryPath = try existingDirectory()
        _ = try POSIXFile.withExclusiveLock(lockPath, create: true) {
            // rename replaces whatever is at the path (a damaged file, a link, a FIFO) without touching a target.
            try writeSnapshot(ReplayLedger(), in: directoryPath)
        }
    }

    /// Reads the persisted state without changing it (for `sealed-push device replay-state` and diagnostics).
    ///
    /// - Parameter now: The current time, UNIX seconds (used only to migrate a version 1 file's view).
    /// - Returns: The counters and watermarks; an empty state when no file exists yet.
    /// - Throws: `SealedPushError` with code `keysUnavailable`, `keyStoreCorrupt` or `io`.
    public func state(now: UInt64) throws -> ReplayGuardState {
        _ = try existingDirectory()
        let file = try load(now: now)
        let ledger = file.ledger()
        return ReplayGuardState(
            count: ledger.entries.count,
            capacity: capacity,
            evictedIssuedAt: ledger.evictedIssuedAt,
            prunedThrough: ledger.prunedThrough,
            latestIssuedAt: ledger.latestIssuedAt,
            latestAcceptedAt: ledger.latestAcceptedAt,
            duplicateWindow: duplicateWindow,
            earliestIssuedAt: ledger.entries.values.map(\.issuedAt).min(),
            latestExpiresAt: ledger.entries.values.map(\.expiresAt).max(),
            journalRecords: file.olderVersion == nil ? file.journalCount : 0,
            fileVersion: file.bytes.isEmpty ? nil : Int(file.bytes[4]))
    }

    private func existingDirectory() throws -> String {
        let directoryPath = directory.path
        guard try POSIXFile.checkDirectory(directoryPath) else {
            throw SealedPushError(.io, "replay guard directory \(directoryPath) does not exist")
        }
        return directoryPath
    }

    private func load(now: UInt64) throws -> ReplayStateFile {
        let limit = ReplayLedger.headerLength + ReplayLedger.entryLength * (max(capacity, 1) + 1) + (1 << 20)
        switch try POSIXFile.read(filePath, limit: limit) {
        case .missing:
            return ReplayStateFile()
        case .denied(let code):
            throw SealedPushError(
                .keysUnavailable,
                "replay state at \(filePath) is not readable (\(POSIXFile.errnoText(code)))"
            )
        case .bytes(let bytes):
            return try ReplayStateFile(bytes: bytes, now: now)
        }
    }
}
