#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// A ``ReplayGuard`` in memory (tests, or a process that never restarts). Thread-safe.
public final class InMemoryReplayGuard: ReplayGuard, @unchecked Sendable {
    private let lock = ClientLock()
    private var ledger = ReplayLedger()

    /// The most message ids kept at once.
    public let capacity: Int
    /// How long after its first acceptance (device time, seconds) an exact copy of an envelope is a duplicate
    /// rather than a replay; 0 turns duplicate detection off (`Specs/keyring-v1.md` §5.5).
    public let duplicateWindow: UInt64

    /// Creates an empty guard.
    ///
    /// - Parameters:
    ///   - capacity: The most message ids kept at once (default 16,384).
    ///   - duplicateWindow: The duplicate window in seconds (default 600; 0 for none).
    public init(
        capacity: Int = FileReplayGuard.defaultCapacity,
        duplicateWindow: UInt64 = FileReplayGuard.defaultDuplicateWindow
    ) {
        self.capacity = capacity
        self.duplicateWindow = duplicateWindow
    }

    /// Records `messageID` as seen, or rejects it. Ids recorded this way are never taken for duplicates.
    ///
    /// - Parameters:
    ///   - messageID: The 16-byte message id.
    ///   - issuedAt: The envelope's authenticated `issuedAt`, UNIX seconds.
    ///   - expiresAt: The envelope's `expiresAt`, UNIX seconds.
    ///   - now: The current time, UNIX seconds.
    /// - Throws: `SealedPushError` with code `expired`, `notYetValid`, `replayed` or `invalidArgument`.
    public func checkAndRecord(messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64) throws {
        try lock.withLock {
            try ledger.record(messageID: messageID, issuedAt: issuedAt, expiresAt: expiresAt, now: now, capacity: capacity)
        }
    }

    /// Records `messageID` with the envelope's digest, finds the envelope a duplicate, or rejects it.
    ///
    /// - Parameters:
    ///   - messageID: The 16-byte message id.
    ///   - envelopeDigest: ``EnvelopeDigest/of(_:)`` of the binary envelope.
    ///   - issuedAt: The envelope's authenticated `issuedAt`, UNIX seconds.
    ///   - expiresAt: The envelope's `expiresAt`, UNIX seconds.
    ///   - now: The current time, UNIX seconds.
    /// - Returns: ``ReplayVerdict/first`` or ``ReplayVerdict/duplicate(firstAcceptedAt:)``.
    /// - Throws: `SealedPushError` with code `expired`, `notYetValid`, `replayed` or `invalidArgument`.
    public func checkAndRecord(
        messageID: [UInt8], envelopeDigest: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64
    ) throws -> ReplayVerdict {
        let decision = try lock.withLock {
            try ledger.check(
                messageID: messageID, digest: envelopeDigest, issuedAt: issuedAt, expiresAt: expiresAt, now: now,
                capacity: capacity, window: duplicateWindow)
        }
        switch decision {
        case .recorded: return .first
        case .duplicate(let firstAcceptedAt): return .duplicate(firstAcceptedAt: firstAcceptedAt)
        case .refused(let error, _): throw error
        }
    }
}
