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

    /// Creates an empty guard.
    ///
    /// - Parameter capacity: The most message ids kept at once (default 16,384).
    public init(capacity: Int = FileReplayGuard.defaultCapacity) {
        self.capacity = capacity
    }

    /// Records `messageID` as seen, or rejects it.
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
}
