import SealedPushCore

/// The bounded set behind every replay guard, with its binary file form (`Specs/keyring-v1.md` §5).
///
/// Three persisted values make it safe when full and when the device clock misbehaves:
/// - ``evictedIssuedAt``: the latest `issuedAt` of an id evicted for room. An envelope issued no later than that
///   could be an evicted one and is refused; one issued after it never is.
/// - ``latestIssuedAt``: the latest authenticated `issuedAt` recorded — the sender's clock, a lower bound on real
///   time that a wrong device clock cannot move.
/// - ``prunedThrough``: ids are dropped only when they expire before `min(now, latestIssuedAt)`, and the largest
///   such bound is kept: an envelope expiring no later than that is refused, so an id dropped while the device
///   clock ran ahead cannot open again when the clock goes back.
struct ReplayLedger: Equatable {
    static func == (lhs: ReplayLedger, rhs: ReplayLedger) -> Bool {
        lhs.evictedIssuedAt == rhs.evictedIssuedAt && lhs.prunedThrough == rhs.prunedThrough
            && lhs.latestIssuedAt == rhs.latestIssuedAt && lhs.entries == rhs.entries
    }

    static let magic: [UInt8] = Array("SPRG".utf8)
    static let version: UInt8 = 2
    static let headerLength = 33
    static let entryLength = 32
    static let legacyVersion: UInt8 = 1
    static let legacyHeaderLength = 17
    static let legacyEntryLength = 24

    struct Entry: Equatable {
        var issuedAt: UInt64
        var expiresAt: UInt64
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
    var entries: [[UInt8]: Entry] = [:]
    /// Whether this ledger was read from a version 1 file (its migration must be written back at once, so the
    /// migration time it was computed with stays fixed).
    private(set) var migrated = false

    init() {}

    /// Parses the file form: version 2, or a version 1 file, migrated without letting any recorded or evicted id
    /// open again.
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
            guard bytes.count >= Self.headerLength else { throw Self.corrupt("header shorter than 33 bytes") }
            evictedIssuedAt = Self.uint64(bytes, at: 5)
            prunedThrough = Self.uint64(bytes, at: 13)
            latestIssuedAt = Self.uint64(bytes, at: 21)
            let count = Self.uint32(bytes, at: 29)
            guard bytes.count == Self.headerLength + count * Self.entryLength else {
                throw Self.corrupt("length \(bytes.count) does not match \(count) entries")
            }
            var offset = Self.headerLength
            for _ in 0..<count {
                let entry = Entry(issuedAt: Self.uint64(bytes, at: offset + 16),
                                  expiresAt: Self.uint64(bytes, at: offset + 24))
                guard entry.issuedAt <= entry.expiresAt else {
                    throw Self.corrupt("an entry expires before it was issued")
                }
                try insertParsed(Array(bytes[offset..<(offset + 16)]), entry)
                offset += Self.entryLength
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
        let count = UInt32(entries.count)
        out += [UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
        for (id, entry) in entries.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += id
            Self.append(entry.issuedAt, to: &out)
            Self.append(entry.expiresAt, to: &out)
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

    mutating func record(messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64, now: UInt64, capacity: Int) throws {
        guard messageID.count == EnvelopeV1.messageIDLength else {
            throw SealedPushError(.invalidArgument, "a message id is 16 bytes, got \(messageID.count)")
        }
        guard issuedAt <= expiresAt else {
            throw SealedPushError(.invalidArgument, "expiresAt \(expiresAt) is before issuedAt \(issuedAt)")
        }
        guard now < expiresAt else {
            throw SealedPushError(.expired, "the envelope expired at \(expiresAt) (UNIX seconds); now is \(now)")
        }
        try EnvelopeV1.checkNotBefore(issuedAt: issuedAt, now: now)
        let id = Self.hex(messageID)
        guard entries[messageID] == nil else {
            throw SealedPushError(.replayed, "message \(id) was already opened")
        }
        guard expiresAt > prunedThrough else {
            throw SealedPushError(
                .replayed,
                "message \(id) expires at \(expiresAt), not after \(prunedThrough), up to which the replay guard has "
                    + "dropped expired ids; it cannot be proven fresh")
        }
        guard evictedIssuedAt == 0 || issuedAt > evictedIssuedAt else {
            throw SealedPushError(
                .replayed,
                "message \(id) was issued at \(issuedAt), not after \(evictedIssuedAt), the latest issue time the "
                    + "full replay guard evicted; it cannot be proven fresh")
        }
        entries[messageID] = Entry(issuedAt: issuedAt, expiresAt: expiresAt)
        evictionOrder.insert(ByIssue(issuedAt: issuedAt, expiresAt: expiresAt, id: messageID))
        expiryOrder.insert(ByExpiry(expiresAt: expiresAt, id: messageID))
        latestIssuedAt = max(latestIssuedAt, issuedAt)
        prune(now: now)
        evict(toCapacity: max(capacity, 1))
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

    private static func uint64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<(offset + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    private static func append(_ value: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
