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
///
/// A guard that also keeps the device time of each acceptance and an ``EnvelopeDigest`` tells an exact duplicate
/// (a sender's resend of the very same envelope, moments later) from a replay:
/// ``checkAndRecord(messageID:envelopeDigest:issuedAt:expiresAt:now:)`` answers
/// ``ReplayVerdict/duplicate(firstAcceptedAt:)`` for it instead of throwing `replayed` (§5.5).
public protocol ReplayGuard: Sendable {
    /// Records `messageID` as seen, or rejects it. Ids recorded this way are never taken for duplicates.
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

    /// Records `messageID` with the envelope's digest and the time, or finds the envelope an exact duplicate of one
    /// accepted within the guard's duplicate window, or rejects it.
    ///
    /// The default implementation records through ``checkAndRecord(messageID:issuedAt:expiresAt:now:)`` and never
    /// reports a duplicate.
    ///
    /// - Parameters:
    ///   - messageID: The envelope's 16-byte message id.
    ///   - envelopeDigest: ``EnvelopeDigest/of(_:)`` of the binary envelope (16 bytes).
    ///   - issuedAt: The envelope's authenticated `issuedAt`, UNIX seconds.
    ///   - expiresAt: The envelope's `expiresAt`, UNIX seconds.
    ///   - now: The current time, UNIX seconds (from the injected clock).
    /// - Returns: ``ReplayVerdict/first`` when the id was recorded, ``ReplayVerdict/duplicate(firstAcceptedAt:)``
    ///   for an exact copy within the window.
    /// - Throws: `SealedPushError` as ``checkAndRecord(messageID:issuedAt:expiresAt:now:)``; `replayed` also for an
    ///   exact copy outside the window and for a different envelope reusing a recorded id; `invalidArgument` for a
    ///   digest that is not 16 bytes.
    func checkAndRecord(
        messageID: [UInt8], envelopeDigest: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64
    ) throws -> ReplayVerdict
}

extension ReplayGuard {
    /// Records through ``checkAndRecord(messageID:issuedAt:expiresAt:now:)``: a guard that keeps no digests never
    /// reports a duplicate, so every envelope seen before is `replayed`.
    ///
    /// - Parameters:
    ///   - messageID: The envelope's 16-byte message id.
    ///   - envelopeDigest: Ignored.
    ///   - issuedAt: The envelope's authenticated `issuedAt`, UNIX seconds.
    ///   - expiresAt: The envelope's `expiresAt`, UNIX seconds.
    ///   - now: The current time, UNIX seconds.
    /// - Returns: ``ReplayVerdict/first``.
    /// - Throws: What ``checkAndRecord(messageID:issuedAt:expiresAt:now:)`` throws.
    public func checkAndRecord(
        messageID: [UInt8], envelopeDigest: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64
    ) throws -> ReplayVerdict {
        try checkAndRecord(messageID: messageID, issuedAt: issuedAt, expiresAt: expiresAt, now: now)
        return .first
    }
}
