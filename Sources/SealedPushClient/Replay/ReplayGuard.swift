import SealedPushCore

/// Remembers the message ids of opened envelopes so an envelope opens at most once (spec §8 step 13,
/// `Specs/keyring-v1.md` §5).
///
/// Callers record a message id only after the envelope authenticated and its content parsed (step 12), so forged
/// envelopes cannot fill the set, and pass the envelope's authenticated `issuedAt` and `expiresAt`. An id is kept
/// until its envelope expires. Implementations are bounded: when full they evict the ids issued earliest and from
/// then on refuse, as `replayed`, only envelopes issued no later than an evicted one (fail closed: an evicted id
/// never opens again, and a message issued after the evicted ones always can). Pruning is bounded by the
/// authenticated `issuedAt` of recorded envelopes, so a device clock that jumps forward and back cannot make an
/// id open twice.
public protocol ReplayGuard: Sendable {
    /// Records `messageID` as seen, or rejects it.
    ///
    /// - Parameters:
    ///   - messageID: The envelope's 16-byte message id.
    ///   - issuedAt: The envelope's authenticated `issuedAt`, UNIX seconds.
    ///   - expiresAt: The envelope's `expiresAt`, UNIX seconds: how long the id must be remembered.
    ///   - now: The current time, UNIX seconds (from the injected clock).
    /// - Throws: `SealedPushError` with code `expired` (`now >= expiresAt`), `notYetValid` (`issuedAt` more than
    ///   the allowed clock skew ahead of `now`), `replayed` (seen before, or not provably fresh after an overflow),
    ///   `invalidArgument` (id not 16 bytes, `issuedAt > expiresAt`), `keyStoreCorrupt` or `io` (persisted state).
    func checkAndRecord(messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64) throws
}


