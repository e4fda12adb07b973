import SealedPushCore

/// The bounded set behind every replay guard, with its binary file form (`Specs/keyring-v1.md` §5).
///
/// Each id is kept with its envelope's times, the device time it was first accepted and a digest of the envelope,
/// so an exact copy arriving within the duplicate window (a sender's resend) is told from a replay (§5.5).
///
/// Four persisted values make it safe when full and when the device clock misbehaves:
/// - ``evictedIssuedAt``: the latest `issuedAt` of an id evicted for room. An envelope issued no later than that
///   could be an evicted one and is refused; one issued after it never is.
/// - ``latestIssuedAt``: the latest authenticated `issuedAt` recorded — the sender's clock, a lower bound on real
///   time that a wrong device clock cannot move.
/// - ``prunedThrough``: ids are dropped only when they expire before `min(now, latestIssuedAt)`, and the largest
///   such bound is kept: an envelope expiring no later than that is refused, so an id dropped while the device
///   clock ran ahead cannot open again when the clock goes back.
/// - ``latestAcceptedAt``: the latest device time at which an id was accepted, bounded by `latestIssuedAt + 600`.
///   A duplicate window is measured up to it, so a device clock set back cannot reopen a window that has passed.
struct ReplayLedger: Equatable {
    static func == (lhs: ReplayLedger, rhs: ReplayLedger) -> Bool {
        lhs.evictedIssuedAt == rhs.evictedIssuedAt && lhs.prunedThrough == rhs.prunedThrough
            && lhs.latestIssuedAt == rhs.latestIssuedAt && lhs.latestAcceptedAt == rhs.latestAcceptedAt
            && lhs.entries == rhs.entries
    }

    static let magic: [UInt8] = Array("SPRG".utf8)
    static let version: UInt8 = 3
    static let headerLength = 41
    static let entryLength = 56
    /// Version 2: no acceptance times, no digests (read and migrated).
    static let version2: UInt8 = 2
    static let version2HeaderLength = 33
    static let version2EntryLength = 32
    static let legacyVersion: UInt8 = 1
    static let legacyHeaderLength = 17
    static let legacyEntryLength = 24
    /// The length of an envelope digest.
    static let digestLength = 16

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

    /// What ``check(messageID:digest:issuedAt:expiresAt:now:capacity:window:)`` decided.
    enum Decision: Equatable {
        /// A new id, now recorded.
        case recorded
        /// An exact copy of the envelope accepted at `firstAcceptedAt` (device time), within the window.
        case duplicate(firstAcceptedAt: UInt64)
        /// Refused; `changed` says whether the ledger changed anyway (a duplicate window closed) and must be written.
        case refused(SealedPushError, changed: Bool)
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

    /// Every envelope with `issuedAt <= evictedIssuedAt` is refused (it could be an evicted id); 0 when none was.
    var evictedIssuedAt: UInt64 = 0
    /// Every envelope with `expiresAt <= prunedThrough` is refused (its id may have been dropped).
    var prunedThrough: UInt64 = 0
    /// The latest authenticated `issuedAt` recorded.
    var latestIssuedAt: UInt64 = 0
    /// The latest `min(now, latestIssuedAt + 600)` at which an id was recorded: duplicate windows are measured up
    /// to at least this time.
    var latestAcceptedAt: UInt64 = 0
    var entries: [[UInt8]: Entry] = [:]
    /// Whether this ledger was read from a version 1 or 2 file (its migration is written back at once, so the
    /// migration time a version 1 file was read with stays fixed).
    private(set) var migrated = false

    init() {}

    /// Parses the file form: version 3, or a version 2 or 1 file, migrated without letting any recorded or evicted id
    /// open again (their entries carry no digest, so none of them is ever taken for a duplicate).
    ///
    /// - Parameters:
    ///   - bytes: The file's bytes.
    ///   - now: The current time, used only to migrate a version 1 file.
    init(bytes: [UInt8], now: UInt64) throws {
        guard bytes.count >= 5, Array(bytes[0..<4]) == Self.magic else {
            throw Self.corrupt("missing SPRG header")
        }
        switch bytes[4] {
        case Self.version:
            guard bytes.count >= Self.headerLength else { throw Self.corrupt("header shorter than 41 bytes") }
            evictedIssuedAt = Self.uint64(bytes, at: 5)
            prunedThrough = Self.uint64(bytes, at: 13)
            latestIssuedAt = Self.uint64(bytes, at: 21)
            latestAcceptedAt = Self.uint64(bytes, at: 29)
            let count = Self.uint32(bytes, at: 37)
            guard bytes.count == Self.headerLength + count * Self.entryLength else {
                throw Self.corrupt("length \(bytes.count) does not match \(count) entries")
            }
            var offset = Self.headerLength
            for _ in 0..<count {
                let entry = Entry(issuedAt: Self.uint64(bytes, at: offset + 16),
                                  expiresAt: Self.uint64(bytes, at: offset + 24),
                                  acceptedAt: Self.uint64(bytes, at: offset + 32),
                                  digest: Digest(high: Self.uint64(bytes, at: offset + 40),
                                                 low: Self.uint64(bytes, at: offset + 48)))
                guard entry.issuedAt <= entry.expiresAt else {
                    throw Self.corrupt("an entry expires before it was issued")
                }
                try insertParsed(Array(bytes[offset..<(offset + 16)]), entry)
                offset += Self.entryLength
            }
        case Self.version2:
            migrated = true
            guard bytes.count >= Self.version2HeaderLength else { throw Self.corrupt("header shorter than 33 bytes") }
            evictedIssuedAt = Self.uint64(bytes, at: 5)
            prunedThrough = Self.uint64(bytes, at: 13)
            latestIssuedAt = Self.uint64(bytes, at: 21)
            let count = Self.uint32(bytes, at: 29)
            guard bytes.count == Self.version2HeaderLength + count * Self.version2EntryLength else {
                throw Self.corrupt("length \(bytes.count) does not match \(count) entries")
            }
            var offset = Self.version2HeaderLength
            for _ in 0..<count {
                // No acceptance time and no digest were kept: these ids are only ever replays.
                let entry = Entry(issuedAt: Self.uint64(bytes, at: offset + 16),
                                  expiresAt: Self.uint64(bytes, at: offset + 24))
                guard entry.issuedAt <= entry.expiresAt else {
                    throw Self.corrupt("an entry expires before it was issued")
                }
                try insertParsed(Array(bytes[offset..<(offset + 16)]), entry)
                offset += Self.version2EntryLength
            }
        case Self.legacyVersion:
            migrated = true
            guard bytes.count >= Self.legacyHeaderLength else { throw Self.corrupt("header shorter than 17 bytes") }
            // Version 1 kept the largest evicted expiresAt. Evicted envelopes were opened before now, so they were
            // issued no later than now: refusing issuedAt <= now covers them (once, at migration).
            let legacyWatermark = Self.uint64(bytes, at: 5)
            evictedIssuedAt = legacyWatermark > now ? now : 0
            let count = Self.uint32(bytes, at: 13)
            guard bytes.count == Self.legacyHeaderLength + count * Self.legacyEntryLength else {
                throw Self.corrupt("length \(bytes.count) does not match \(count) entries")
            }
            var offset = Self.legacyHeaderLength
            for _ in 0..<count {
                let expiresAt = Self.uint64(bytes, at: offset + 16)
                // issuedAt was not kept; min(expiresAt, now) is an upper bound, the safe side for eviction.
                try insertParsed(Array(bytes[offset..<(offset + 16)]),
                                 Entry(issuedAt: min(expiresAt, now), expiresAt: expiresAt))
                offset += Self.legacyEntryLength
            }
        default:
            throw Self.corrupt("unknown version \(bytes[4])")
        }
        evictionOrder = MinHeap(entries.map { ByIssue(issuedAt: $0.value.issuedAt, expiresAt: $0.value.expiresAt, id: $0.key) })
        expiryOrder = MinHeap(entries.map { ByExpiry(expiresAt: $0.value.expiresAt, id: $0.key) })
    }

    private mutating func insertParsed(_ id: [UInt8], _ entry: Entry) throws {
        guard entries.updateValue(entry, forKey: id) == nil else {
            throw Self.corrupt("a message id appears twice")
        }
    }

    func encoded() -> [UInt8] {
        var out = Self.magic + [Self.version]
        out.reserveCapacity(Self.headerLength + entries.count * Self.entryLength)
        Self.append(evictedIssuedAt, to: &out)
        Self.append(prunedThrough, to: &out)
        Self.append(latestIssuedAt, to: &out)
        Self.append(latestAcceptedAt, to: &out)
        let count = UInt32(entries.count)
        out += [UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
        for (id, entry) in entries.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += id
            Self.append(entry.issuedAt, to: &out)
            Self.append(entry.expiresAt, to: &out)
            Self.append(entry.acceptedAt, to: &out)
            Self.append(entry.digest.high, to: &out)
            Self.append(entry.digest.low, to: &out)
        }
        return out
    }

    /// Drops ids that expired before `min(now, latestIssuedAt)` and remembers that bound.
    ///
    /// Bounding by the latest authenticated `issuedAt` means a device clock running ahead prunes nothing that real
    /// time (as the sender saw it) has not passed; ``prunedThrough`` then refuses whatever was dropped.
    mutating func prune(now: UInt64) {
        let bound = min(now, latestIssuedAt)
        if bound > prunedThrough {
            prunedThrough = bound
            while let next = expiryOrder.min, next.expiresAt <= bound {
                expiryOrder.popMin()
                if entries[next.id]?.expiresAt == next.expiresAt { entries[next.id] = nil }
            }
        }
        // Every envelope issued no later than evictedIssuedAt expires by evictedIssuedAt + 28 days; once that is
        // before prunedThrough, the prunedThrough rule refuses them all and the eviction watermark can go.
        if evictedIssuedAt > 0, evictedIssuedAt + EnvelopeV1.maxLifetime <= prunedThrough {
            evictedIssuedAt = 0
        }
    }

    /// Records a message id without a digest (it is never taken for a duplicate), or throws why not.
    mutating func record(messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64, capacity: Int) throws {
        let decision = try check(
            messageID: messageID, digest: nil, issuedAt: issuedAt, expiresAt: expiresAt, now: now, capacity: capacity,
            window: 0)
        if case .refused(let error, _) = decision { throw error }
    }

    /// Decides on an envelope that opened (`Specs/keyring-v1.md` §5.1): a new id is recorded, an exact copy of an
    /// envelope accepted less than `window` seconds ago is a duplicate, anything else seen before is refused.
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
        guard messageID.count == EnvelopeV1.messageIDLength else {
            throw SealedPushError(.invalidArgument, "a message id is 16 bytes, got \(messageID.count)")
        }
        if let digest, digest.count != Self.digestLength {
            throw SealedPushError(.invalidArgument, "an envelope digest is \(Self.digestLength) bytes, got \(digest.count)")
        }
        guard issuedAt <= expiresAt else {
            throw SealedPushError(.invalidArgument, "expiresAt \(expiresAt) is before issuedAt \(issuedAt)")
        }
        guard now < expiresAt else {
            throw SealedPushError(.expired, "the envelope expired at \(expiresAt) (UNIX seconds); now is \(now)")
        }
        try EnvelopeV1.checkNotBefore(issuedAt: issuedAt, now: now)
        let id = Self.hex(messageID)
        let presented = digest.map(Digest.init) ?? .none
        if let entry = entries[messageID] {
            return duplicateOrReplay(messageID, id: id, entry: entry, presented: presented, now: now, window: window)
        }
        guard expiresAt > prunedThrough else {
            return .refused(SealedPushError(
                .replayed,
                "message \(id) expires at \(expiresAt), not after \(prunedThrough), up to which the replay guard has "
                    + "dropped expired ids; it cannot be proven fresh"), changed: false)
        }
        guard evictedIssuedAt == 0 || issuedAt > evictedIssuedAt else {
            return .refused(SealedPushError(
                .replayed,
                "message \(id) was issued at \(issuedAt), not after \(evictedIssuedAt), the latest issue time the "
                    + "full replay guard evicted; it cannot be proven fresh"), changed: false)
        }
        entries[messageID] = Entry(issuedAt: issuedAt, expiresAt: expiresAt, acceptedAt: now, digest: presented)
        evictionOrder.insert(ByIssue(issuedAt: issuedAt, expiresAt: expiresAt, id: messageID))
        expiryOrder.insert(ByExpiry(expiresAt: expiresAt, id: messageID))
        latestIssuedAt = max(latestIssuedAt, issuedAt)
        let (ceiling, overflow) = latestIssuedAt.addingReportingOverflow(EnvelopeV1.maxClockSkew)
        latestAcceptedAt = max(latestAcceptedAt, overflow ? now : min(now, ceiling))
        prune(now: now)
        evict(toCapacity: max(capacity, 1))
        return .recorded
    }

    /// The rule for an id already recorded (§5.5): the same digest (not none), accepted at or before `now`, and
    /// `max(now, latestAcceptedAt)` before the window's end is a duplicate. An exact copy seen once the window has
    /// passed closes the entry (its digest is cleared), so setting the clock back cannot make it a duplicate again.
    private mutating func duplicateOrReplay(
        _ messageID: [UInt8], id: String, entry: Entry, presented: Digest, now: UInt64, window: UInt64
    ) -> Decision {
        guard presented != .none, entry.digest == presented else {
            let why = entry.digest == .none || presented == .none
                ? "was already opened"
                : "was already opened (this is a different envelope reusing its id)"
            return .refused(SealedPushError(.replayed, "message \(id) \(why)"), changed: false)
        }
        let latest = max(now, latestAcceptedAt)
        // latest >= now >= acceptedAt below, so the subtraction cannot wrap.
        if entry.acceptedAt <= now, latest - entry.acceptedAt < window {
            return .duplicate(firstAcceptedAt: entry.acceptedAt)
        }
        let passed = latest >= entry.acceptedAt && latest - entry.acceptedAt >= window
        if passed { entries[messageID]?.digest = .none }
        return .refused(SealedPushError(
            .replayed,
            "message \(id) was already opened at \(entry.acceptedAt) (device time, UNIX seconds); this exact copy "
                + "came at \(now), " + (passed ? "after the \(window)-second duplicate window"
                                          : "before it was first opened (the device clock went back)")),
            changed: passed)
    }

    /// Evicts the ids issued earliest until `capacity` remain, raising ``evictedIssuedAt``.
    private mutating func evict(toCapacity capacity: Int) {
        while entries.count > capacity, let next = evictionOrder.popMin() {
            guard let entry = entries[next.id], entry.issuedAt == next.issuedAt, entry.expiresAt == next.expiresAt
            else { continue }  // stale: pruned already
            entries[next.id] = nil
            evictedIssuedAt = max(evictedIssuedAt, entry.issuedAt)
        }
        // Drop stale heap elements once they dominate, so memory follows the ledger's size.
        if evictionOrder.count > 2 * entries.count + 64 {
            evictionOrder = MinHeap(entries.map { ByIssue(issuedAt: $0.value.issuedAt, expiresAt: $0.value.expiresAt, id: $0.key) })
        }
        if expiryOrder.count > 2 * entries.count + 64 {
            expiryOrder = MinHeap(entries.map { ByExpiry(expiresAt: $0.value.expiresAt, id: $0.key) })
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    private static func corrupt(_ detail: String) -> SealedPushError {
        SealedPushError(.keyStoreCorrupt, "replay guard file is corrupt: \(detail)")
    }

    static func uint64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<(offset + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    private static func append(_ value: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
