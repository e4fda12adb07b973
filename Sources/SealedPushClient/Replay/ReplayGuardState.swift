/// A snapshot of a replay guard's persisted state (`Specs/keyring-v1.md` §5), for diagnostics and operators.
///
/// It holds no message ids: only counts and times, so it can be printed and logged.
public struct ReplayGuardState: Sendable, Hashable {
    /// How many message ids are remembered.
    public var count: Int
    /// The most ids kept at once.
    public var capacity: Int
    /// Envelopes issued at or before this time (UNIX seconds) are refused: an id evicted for room was issued then.
    /// 0 when nothing was evicted.
    public var evictedIssuedAt: UInt64
    /// Envelopes expiring at or before this time are refused: it is the latest `expiresAt` of an id dropped as
    /// expired. It never passes the latest authenticated `issuedAt`, so a device clock running ahead cannot move it.
    public var prunedThrough: UInt64
    /// The latest authenticated `issuedAt` recorded (the senders' clock).
    public var latestIssuedAt: UInt64
    /// The latest device time at which an id was recorded, bounded by `latestIssuedAt + 600`; duplicate windows are
    /// measured up to at least this time, so a device clock set back cannot reopen one. 0 when none was.
    public var latestAcceptedAt: UInt64
    /// The guard's duplicate window in seconds (0: off).
    public var duplicateWindow: UInt64
    /// The earliest `issuedAt` among remembered ids, if any.
    public var earliestIssuedAt: UInt64?
    /// The latest `expiresAt` among remembered ids, if any.
    public var latestExpiresAt: UInt64?
    /// How many journal records follow the snapshot (0 right after a compaction).
    public var journalRecords: Int = 0
    /// The file format version read (4 is current; an older one is migrated at the next check), nil with no file.
    public var fileVersion: Int?
}
