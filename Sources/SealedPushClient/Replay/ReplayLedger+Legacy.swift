import SealedPushCore

extension ReplayLedger {
    /// Version 3: the version 4 header and entries, no journal.
    static let version3: UInt8 = 3
    /// Version 2: no acceptance times, no digests.
    static let version2: UInt8 = 2
    static let version2HeaderLength = 33
    static let version2EntryLength = 32
    static let legacyVersion: UInt8 = 1
    static let legacyHeaderLength = 17
    static let legacyEntryLength = 24

    /// Parses a version 3, 2 or 1 file (`Specs/keyring-v1.md` §5.4.4), migrated without letting any recorded or
    /// evicted id open again (entries of versions 2 and 1 carry no digest, so none of them is ever a duplicate).
    ///
    /// - Parameters:
    ///   - bytes: The file's bytes (magic already checked).
    ///   - now: The current time, used only to migrate a version 1 file.
    init(olderVersion bytes: [UInt8], now: UInt64) throws {
        self.init()
        var marks = Marks()
        var entries: [[UInt8]: Entry] = [:]
        func insert(_ id: [UInt8], _ entry: Entry) throws {
            guard entry.issuedAt < Self.timeLimit, entry.expiresAt < Self.timeLimit, entry.acceptedAt < Self.timeLimit
            else { throw Self.corrupt("an entry holds a time at or past 2^53") }
            guard entry.issuedAt <= entry.expiresAt else { throw Self.corrupt("an entry expires before it was issued") }
            guard entries.updateValue(entry, forKey: id) == nil else { throw Self.corrupt("a message id appears twice") }
        }
        func checkTimes(_ values: UInt64...) throws {
            guard values.allSatisfy({ $0 < Self.timeLimit }) else { throw Self.corrupt("the header holds a time at or past 2^53") }
        }
        switch bytes[4] {
        case Self.version3:
            guard bytes.count >= Self.headerLength else { throw Self.corrupt("header shorter than 41 bytes") }
            marks = Marks(evictedIssuedAt: Self.uint64(bytes, at: 5), prunedThrough: Self.uint64(bytes, at: 13),
                          latestIssuedAt: Self.uint64(bytes, at: 21), latestAcceptedAt: Self.uint64(bytes, at: 29))
            try checkTimes(marks.evictedIssuedAt, marks.prunedThrough, marks.latestIssuedAt, marks.latestAcceptedAt)
            let count = bytes.withUnsafeBufferPointer { Self.uint32($0, at: 37) }
            guard bytes.count == Self.headerLength + count * Self.entryLength else {
                throw Self.corrupt("length \(bytes.count) does not match \(count) entries")
            }
            var offset = Self.headerLength
            var previous: [UInt8]?
            for _ in 0..<count {
                let id = Array(bytes[offset..<(offset + 16)])
                // Version 3 writers stored entries sorted: a reader refuses what a writer never writes.
                if let previous, !previous.lexicographicallyPrecedes(id) {
                    throw Self.corrupt("entries are not in ascending messageId order")
                }
                previous = id
                try insert(id, Entry(issuedAt: Self.uint64(bytes, at: offset + 16),
                                     expiresAt: Self.uint64(bytes, at: offset + 24),
                                     acceptedAt: Self.uint64(bytes, at: offset + 32),
                                     digest: Digest(high: Self.uint64(bytes, at: offset + 40),
                                                    low: Self.uint64(bytes, at: offset + 48))))
                offset += Self.entryLength
            }
        case Self.version2:
            guard bytes.count >= Self.version2HeaderLength else { throw Self.corrupt("header shorter than 33 bytes") }
            marks = Marks(evictedIssuedAt: Self.uint64(bytes, at: 5), prunedThrough: Self.uint64(bytes, at: 13),
                          latestIssuedAt: Self.uint64(bytes, at: 21))
            try checkTimes(marks.evictedIssuedAt, marks.prunedThrough, marks.latestIssuedAt)
            let count = bytes.withUnsafeBufferPointer { Self.uint32($0, at: 29) }
            guard bytes.count == Self.version2HeaderLength + count * Self.version2EntryLength else {
                throw Self.corrupt("length \(bytes.count) does not match \(count) entries")
            }
            var offset = Self.version2HeaderLength
            for _ in 0..<count {
                // No acceptance time and no digest were kept: these ids are only ever replays.
                try insert(Array(bytes[offset..<(offset + 16)]),
                           Entry(issuedAt: Self.uint64(bytes, at: offset + 16), expiresAt: Self.uint64(bytes, at: offset + 24)))
                offset += Self.version2EntryLength
            }
        case Self.legacyVersion:
            guard bytes.count >= Self.legacyHeaderLength else { throw Self.corrupt("header shorter than 17 bytes") }
            try Self.checkClock(now)
            // Version 1 kept the largest evicted expiresAt. Evicted envelopes were opened before now, so they were
            // issued no later than now: refusing issuedAt <= now covers them (once, at migration).
            let legacyWatermark = Self.uint64(bytes, at: 5)
            marks.evictedIssuedAt = legacyWatermark > now ? now : 0
            let count = bytes.withUnsafeBufferPointer { Self.uint32($0, at: 13) }
            guard bytes.count == Self.legacyHeaderLength + count * Self.legacyEntryLength else {
                throw Self.corrupt("length \(bytes.count) does not match \(count) entries")
            }
            var offset = Self.legacyHeaderLength
            for _ in 0..<count {
                let expiresAt = Self.uint64(bytes, at: offset + 16)
                // issuedAt was not kept; min(expiresAt, now) is an upper bound, the safe side for eviction.
                try insert(Array(bytes[offset..<(offset + 16)]), Entry(issuedAt: min(expiresAt, now), expiresAt: expiresAt))
                offset += Self.legacyEntryLength
            }
        default:
            throw Self.corrupt("unknown version \(bytes[4])")
        }
        self = ReplayLedger(marks: marks, entries: entries)
    }
}
