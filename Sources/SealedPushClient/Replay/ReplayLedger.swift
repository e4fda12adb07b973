import SealedPushCore

/// The bounded set behind every replay guard and its rules (`Specs/keyring-v1.md` §5).
///
/// Each id is kept with its envelope's times, the device time it was first accepted and a digest of the envelope,
/// so an exact copy arriving within the duplicate window (a sender's resend) is told from a replay (§5.5).
///
/// Four values (``Marks``) make it safe when full and when the device clock misbehaves:
/// - ``evictedIssuedAt``: the latest `issuedAt` of an id evicted for room. An envelope issued no later than that
///   could be an evicted one and is refused; one issued after it never is.
/// - ``latestIssuedAt``: the latest authenticated `issuedAt` recorded — the sender's clock, a lower bound on real
///   time that a wrong device clock cannot move — moved by at most a day per envelope (the stride, §5.1.1).
/// - ``prunedThrough``: ids are dropped only when they expire before `min(now, latestIssuedAt)`; the largest
///   `expiresAt` dropped is kept, and an envelope expiring no later than that is refused, so an id dropped while the
///   device clock ran ahead cannot open again when the clock goes back.
/// - ``latestAcceptedAt``: the latest device time at which an id was accepted, bounded by `latestIssuedAt + 600`
///   and by the stride. A duplicate window is measured up to it, so a device clock set back cannot reopen a window
///   that has passed.
///
/// The file form (a snapshot and a journal) is ``ReplayStateFile``; this type is the whole state in memory, used by
/// ``InMemoryReplayGuard`` and when a file is compacted.
struct ReplayLedger: Equatable {
    static func == (lhs: ReplayLedger, rhs: ReplayLedger) -> Bool {
        lhs.marks == rhs.marks && lhs.entries == rhs.entries
    }

    static let magic: [UInt8] = Array("SPRG".utf8)
    /// The version written: a snapshot followed by a journal.
    static let version: UInt8 = 4
    static let headerLength = 41
    static let entryLength = 56
    /// The length of an envelope digest.
    static let digestLength = 16
    /// Every time the state holds is below this (2^53): a reader refuses more, so a writer never writes it.
    static let timeLimit: UInt64 = 1 << 53
    /// How far one recorded envelope may move `latestIssuedAt` and `latestAcceptedAt` past the previous
    /// `latestAcceptedAt` (§5.1.1).
    static let stride: UInt64 = 86_400
    /// The reference journal length at which a writer compacts (§5.4.3).
    static let defaultJournalLimit = 1_024
    /// The longest journal a writer may leave (§5.4.3).
    static let maximumJournalLimit = 8_192

    /// The first 16 bytes of SHA-256 over the binary envelope, as two big-endian halves; all zero means "no
    /// digest": the entry never matches a duplicate (ids recorded without a digest, migrated, or whose duplicate
    /// window has closed).
    struct Digest: Hashable {
        var high: UInt64
        var low: UInt64
        static let none = Digest(high: 0, low: 0)

        init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        /// - Parameter bytes: 16 bytes.
        init(_ bytes: [UInt8]) {
            high = ReplayLedger.uint64(bytes, at: 0)
            low = ReplayLedger.uint64(bytes, at: 8)
        }
    }

    struct Entry: Equatable {
        var issuedAt: UInt64
        var expiresAt: UInt64
        /// The device time at which the id was accepted (0 when unknown: migrated).
        var acceptedAt: UInt64 = 0
        var digest: Digest = .none
    }

    /// The state's four cut-offs: `W`, `P`, `L` and `A` of §5.
    struct Marks: Equatable {
        /// Every envelope with `issuedAt <= evictedIssuedAt` is refused (it could be an evicted id); 0 when none was.
        var evictedIssuedAt: UInt64 = 0
        /// Every envelope with `expiresAt <= prunedThrough` is refused (its id may have been dropped).
        var prunedThrough: UInt64 = 0
        /// The latest authenticated `issuedAt` recorded, moved by at most the stride per envelope.
        var latestIssuedAt: UInt64 = 0
        /// The latest `min(now, latestIssuedAt + 600)` at which an id was recorded, moved by at most the stride per
        /// envelope: duplicate windows are measured up to at least this time.
        var latestAcceptedAt: UInt64 = 0

        /// Moves `L` and `A` for a recorded entry (§5.1.1): each by at most ``ReplayLedger/stride`` past the
        /// previous `A`, so one envelope issued years ahead, accepted while the device clock was as wrong, moves
        /// the cut-offs by a day, not by years.
        mutating func admit(_ entry: Entry) {
            // Every time held is below 2^53 (readers check, rule 1 bounds now), so these sums cannot overflow.
            let bound = latestAcceptedAt > 0 ? latestAcceptedAt + ReplayLedger.stride : UInt64.max
            latestIssuedAt = max(latestIssuedAt, min(entry.issuedAt, bound))
            latestAcceptedAt = max(
                latestAcceptedAt, min(entry.acceptedAt, latestIssuedAt + EnvelopeV1.maxClockSkew, bound))
        }
    }

    /// What ``check(messageID:digest:issuedAt:expiresAt:now:capacity:window:)`` decided.
    enum Decision: Equatable {
        /// A new id, now recorded.
        case recorded
        /// An exact copy of the envelope accepted at `firstAcceptedAt` (device time), within the window.
        case duplicate(firstAcceptedAt: UInt64)
        /// Refused; `changed` says whether the ledger changed anyway (a duplicate window closed) and must be written.
        case refused(SealedPushError, changed: Bool)
    }

    /// What the rules of §5.1 say about one envelope, before anything changes.
    enum Ruling: Equatable {
        /// Record this entry (rule 5).
        case record(Entry)
        /// An exact copy accepted at `firstAcceptedAt`, within the window: nothing changes.
        case duplicate(firstAcceptedAt: UInt64)
        /// Refused with `error`; `close` says whether the entry's duplicate window must be closed (§5.5).
        case refused(SealedPushError, close: Bool)
    }

    /// Heap keys; an element whose id is gone from ``entries`` (or holds other times) is stale and skipped.
    private struct ByIssue: Comparable {
        var issuedAt: UInt64
        var expiresAt: UInt64
        var id: [UInt8]
        static func < (lhs: ByIssue, rhs: ByIssue) -> Bool {
            (lhs.issuedAt, lhs.expiresAt) < (rhs.issuedAt, rhs.expiresAt)
                || ((lhs.issuedAt, lhs.expiresAt) == (rhs.issuedAt, rhs.expiresAt) && lhs.id.lexicographicallyPrecedes(rhs.id))
        }
    }

    private struct ByExpiry: Comparable {
        var expiresAt: UInt64
        var id: [UInt8]
        static func < (lhs: ByExpiry, rhs: ByExpiry) -> Bool {
            lhs.expiresAt < rhs.expiresAt || (lhs.expiresAt == rhs.expiresAt && lhs.id.lexicographicallyPrecedes(rhs.id))
        }
    }

    private var evictionOrder = MinHeap<ByIssue>()
    private var expiryOrder = MinHeap<ByExpiry>()

    var marks = Marks()
    var entries: [[UInt8]: Entry] = [:]

    var evictedIssuedAt: UInt64 { marks.evictedIssuedAt }
    var prunedThrough: UInt64 { marks.prunedThrough }
    var latestIssuedAt: UInt64 { marks.latestIssuedAt }
    var latestAcceptedAt: UInt64 { marks.latestAcceptedAt }

    init() {}

    /// A ledger holding `entries` under `marks`.
    init(marks: Marks, entries: [[UInt8]: Entry]) {
        self.marks = marks
        self.entries = entries
        rebuildOrders()
    }

    /// Parses any version of the file form (version 4 with its journal applied; versions 3, 2 and 1 migrated).
    ///
    /// - Parameters:
    ///   - bytes: The file's bytes.
    ///   - now: The current time, used only to migrate a version 1 file.
    init(bytes: [UInt8], now: UInt64) throws {
        self = try ReplayStateFile(bytes: bytes, now: now).ledger()
    }

    private mutating func rebuildOrders() {
        evictionOrder = MinHeap(entries.map { ByIssue(issuedAt: $0.value.issuedAt, expiresAt: $0.value.expiresAt, id: $0.key) })
        expiryOrder = MinHeap(entries.map { ByExpiry(expiresAt: $0.value.expiresAt, id: $0.key) })
    }

    /// The version 4 file form with an empty journal: a snapshot of the whole state.
    func encoded() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.headerLength + entries.count * Self.entryLength)
        out.replaceSubrange(0..<4, with: Self.magic)
        out[4] = Self.version
        Self.put(marks.evictedIssuedAt, into: &out, at: 5)
        Self.put(marks.prunedThrough, into: &out, at: 13)
        Self.put(marks.latestIssuedAt, into: &out, at: 21)
        Self.put(marks.latestAcceptedAt, into: &out, at: 29)
        let count = UInt32(entries.count)
        out[37] = UInt8(count >> 24); out[38] = UInt8((count >> 16) & 0xff)
        out[39] = UInt8((count >> 8) & 0xff); out[40] = UInt8(count & 0xff)
        var offset = Self.headerLength
        for (id, entry) in entries.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out.replaceSubrange(offset..<(offset + 16), with: id)
            Self.put(entry.issuedAt, into: &out, at: offset + 16)
            Self.put(entry.expiresAt, into: &out, at: offset + 24)
            Self.put(entry.acceptedAt, into: &out, at: offset + 32)
            Self.put(entry.digest.high, into: &out, at: offset + 40)
            Self.put(entry.digest.low, into: &out, at: offset + 48)
            offset += Self.entryLength
        }
        return out
    }

    /// Applies a journal record: an added entry (moving `L` and `A` by the stride rule) or a closed window.
    mutating func apply(_ record: ReplayJournalRecord) {
        switch record.change {
        case .add(let entry):
            entries[record.messageID] = entry
            evictionOrder.insert(ByIssue(issuedAt: entry.issuedAt, expiresAt: entry.expiresAt, id: record.messageID))
            expiryOrder.insert(ByExpiry(expiresAt: entry.expiresAt, id: record.messageID))
            marks.admit(entry)
        case .close:
            entries[record.messageID]?.digest = .none
        }
    }

    /// Compaction's work on the state (§5.4.3): prune (5.2), evict down to `capacity` (5.3), then drop the eviction
    /// watermark once pruning covers everything it refused.
    mutating func compact(now: UInt64, capacity: Int) {
        prune(now: now)
        evict(toCapacity: max(capacity, 1))
        if marks.evictedIssuedAt > 0, marks.evictedIssuedAt + EnvelopeV1.maxLifetime <= marks.prunedThrough {
            marks.evictedIssuedAt = 0
        }
    }

    /// Drops ids that expired before `min(now, latestIssuedAt)` and raises ``prunedThrough`` to the largest
    /// `expiresAt` dropped.
    ///
    /// Bounding by the latest authenticated `issuedAt` means a device clock running ahead prunes nothing that real
    /// time (as the sender saw it) has not passed; ``prunedThrough`` then refuses whatever was dropped, and never
    /// more than the set really held.
    private mutating func prune(now: UInt64) {
        let bound = min(now, marks.latestIssuedAt)
        while let next = expiryOrder.min, next.expiresAt <= bound {
            expiryOrder.popMin()
            guard entries[next.id]?.expiresAt == next.expiresAt else { continue }  // stale
            entries[next.id] = nil
            marks.prunedThrough = max(marks.prunedThrough, next.expiresAt)
        }
    }

    /// Evicts the ids issued earliest until `capacity` remain, raising ``evictedIssuedAt``.
    private mutating func evict(toCapacity capacity: Int) {
        while entries.count > capacity, let next = evictionOrder.popMin() {
            guard let entry = entries[next.id], entry.issuedAt == next.issuedAt, entry.expiresAt == next.expiresAt
            else { continue }  // stale: pruned already
            entries[next.id] = nil
            marks.evictedIssuedAt = max(marks.evictedIssuedAt, entry.issuedAt)
        }
        // Drop stale heap elements once they dominate, so memory follows the ledger's size.
        if evictionOrder.count > 2 * entries.count + 64 || expiryOrder.count > 2 * entries.count + 64 {
            rebuildOrders()
        }
    }

    /// Records a message id without a digest (it is never taken for a duplicate), or throws why not.
    mutating func record(messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64, capacity: Int) throws {
        let decision = try check(
            messageID: messageID, digest: nil, issuedAt: issuedAt, expiresAt: expiresAt, now: now, capacity: capacity,
            window: 0)
        if case .refused(let error, _) = decision { throw error }
    }

    /// Decides on an envelope that opened (`Specs/keyring-v1.md` §5.1) and applies the decision at once, compacting
    /// after every record (the in-memory form: a journal of one).
    ///
    /// - Parameters:
    ///   - messageID: The 16-byte message id.
    ///   - digest: The envelope's 16-byte digest (``EnvelopeDigest``), or nil to record without one.
    ///   - issuedAt: The envelope's authenticated `issuedAt`.
    ///   - expiresAt: The envelope's `expiresAt`.
    ///   - now: The device time.
    ///   - capacity: The most ids kept.
    ///   - window: The duplicate window in seconds (0: no duplicates).
    /// - Returns: The decision; ``Decision/refused(_:changed:)`` carries the `replayed` error.
    /// - Throws: `SealedPushError` with code `invalidArgument`, `expired` or `notYetValid`.
    mutating func check(
        messageID: [UInt8], digest: [UInt8]?, issuedAt: UInt64, expiresAt: UInt64, now: UInt64, capacity: Int,
        window: UInt64
    ) throws -> Decision {
        let ruling = try Self.rule(
            messageID: messageID, digest: digest, issuedAt: issuedAt, expiresAt: expiresAt, now: now, window: window,
            marks: marks, existing: { entries[$0] })
        switch ruling {
        case .record(let entry):
            apply(ReplayJournalRecord(messageID: messageID, change: .add(entry)))
            compact(now: now, capacity: capacity)
            return .recorded
        case .duplicate(let firstAcceptedAt):
            return .duplicate(firstAcceptedAt: firstAcceptedAt)
        case .refused(let error, let close):
            if close { apply(ReplayJournalRecord(messageID: messageID, change: .close)) }
            return .refused(error, changed: close)
        }
    }

    /// The rules of §5.1 and §5.5 for one envelope against a state, without changing it.
    ///
    /// - Parameters:
    ///   - messageID: The 16-byte message id.
    ///   - digest: The envelope's 16-byte digest, or nil (never a duplicate).
    ///   - issuedAt: The envelope's authenticated `issuedAt`.
    ///   - expiresAt: The envelope's `expiresAt`.
    ///   - now: The device time.
    ///   - window: The duplicate window in seconds.
    ///   - marks: The state's cut-offs.
    ///   - existing: Looks an id up in the state's entries.
    /// - Returns: What to do.
    /// - Throws: `SealedPushError` with code `invalidArgument`, `expired` or `notYetValid`.
    static func rule(
        messageID: [UInt8], digest: [UInt8]?, issuedAt: UInt64, expiresAt: UInt64, now: UInt64, window: UInt64,
        marks: Marks, existing: ([UInt8]) -> Entry?
    ) throws -> Ruling {
        guard messageID.count == EnvelopeV1.messageIDLength else {
            throw SealedPushError(.invalidArgument, "a message id is 16 bytes, got \(messageID.count)")
        }
        if let digest, digest.count != Self.digestLength {
            throw SealedPushError(.invalidArgument, "an envelope digest is \(Self.digestLength) bytes, got \(digest.count)")
        }
        guard issuedAt <= expiresAt else {
            throw SealedPushError(.invalidArgument, "expiresAt \(expiresAt) is before issuedAt \(issuedAt)")
        }
        // With issuedAt at most now + 600 (below), nothing past now + 600 + 28 days is ever remembered (rule 1), so
        // every time written stays below the state's 2^53.
        guard expiresAt - issuedAt <= EnvelopeV1.maxLifetime else {
            throw SealedPushError(
                .invalidArgument,
                "a lifetime of \(expiresAt - issuedAt) s (issuedAt \(issuedAt) to expiresAt \(expiresAt)) is over the "
                    + "envelope's \(EnvelopeV1.maxLifetime) s (28 days)")
        }
        guard now < expiresAt else {
            throw SealedPushError(.expired, "the envelope expired at \(expiresAt) (UNIX seconds); now is \(now)")
        }
        try EnvelopeV1.checkNotBefore(issuedAt: issuedAt, now: now)
        try checkClock(now)
        let id = Hex.encode(messageID)
        let presented = digest.map(Digest.init) ?? .none
        if let entry = existing(messageID) {
            return duplicateOrReplay(id: id, entry: entry, presented: presented, now: now, window: window,
                                     latestAcceptedAt: marks.latestAcceptedAt)
        }
        guard expiresAt > marks.prunedThrough else {
            return .refused(SealedPushError(
                .replayed,
                "message \(id) expires at \(expiresAt), not after \(marks.prunedThrough), up to which the replay "
                    + "guard has dropped expired ids; it cannot be proven fresh"), close: false)
        }
        guard marks.evictedIssuedAt == 0 || issuedAt > marks.evictedIssuedAt else {
            return .refused(SealedPushError(
                .replayed,
                "message \(id) was issued at \(issuedAt), not after \(marks.evictedIssuedAt), the latest issue time "
                    + "the full replay guard evicted; it cannot be proven fresh"), close: false)
        }
        return .record(Entry(issuedAt: issuedAt, expiresAt: expiresAt, acceptedAt: now, digest: presented))
    }

    /// Rule 1's bound on the device clock: with `now + 600 + 28 days` below 2^53, every time recorded is too.
    static func checkClock(_ now: UInt64) throws {
        let (latest, overflow) = now.addingReportingOverflow(EnvelopeV1.maxClockSkew + EnvelopeV1.maxLifetime)
        guard !overflow, latest < timeLimit else {
            throw SealedPushError(
                .invalidArgument,
                "the device clock reads \(now) (UNIX seconds), past what the replay state holds (times below 2^53 "
                    + "with 28 days and 600 s of room); set the clock right")
        }
    }

    /// The rule for an id already recorded (§5.5): the same digest (not none), accepted at or before `now`, and
    /// `max(now, latestAcceptedAt)` before the window's end is a duplicate. An exact copy seen once the window has
    /// passed closes the entry (its digest is cleared), so setting the clock back cannot make it a duplicate again.
    private static func duplicateOrReplay(
        id: String, entry: Entry, presented: Digest, now: UInt64, window: UInt64, latestAcceptedAt: UInt64
    ) -> Ruling {
        guard presented != .none, entry.digest == presented else {
            let why = entry.digest == .none || presented == .none
                ? "was already opened"
                : "was already opened (this is a different envelope reusing its id)"
            return .refused(SealedPushError(.replayed, "message \(id) \(why)"), close: false)
        }
        let latest = max(now, latestAcceptedAt)
        // latest >= now >= acceptedAt below, so the subtraction cannot wrap.
        if entry.acceptedAt <= now, latest - entry.acceptedAt < window {
            return .duplicate(firstAcceptedAt: entry.acceptedAt)
        }
        let passed = latest >= entry.acceptedAt && latest - entry.acceptedAt >= window
        return .refused(SealedPushError(
            .replayed,
            "message \(id) was already opened at \(entry.acceptedAt) (device time, UNIX seconds); this exact copy "
                + "came at \(now), " + (passed ? "after the \(window)-second duplicate window"
                                          : "before it was first opened (the device clock went back)")),
            close: passed)
    }

    static func corrupt(_ detail: String) -> SealedPushError {
        SealedPushError(.keyStoreCorrupt, "replay guard file is corrupt: \(detail)")
    }

    static func uint64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes.withUnsafeBufferPointer { uint64($0, at: offset) }
    }

    static func uint64(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
        UInt64(bigEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    static func uint32(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    static func put(_ value: UInt64, into out: inout [UInt8], at offset: Int) {
        for index in 0..<8 { out[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * index)) }
    }
}
