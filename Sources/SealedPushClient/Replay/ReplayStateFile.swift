import SealedPushCore

/// The replay state as read from `replay-v1.bin` (`Specs/keyring-v1.md` §5): a version 4 snapshot, validated and
/// searched in place, with its journal applied on top; or an older version, migrated whole.
///
/// A check needs one id and the four cut-offs, so a full snapshot (16,384 ids, 918 KB) is not turned into a
/// dictionary: its ids are checked for order once per read and looked up by binary search. Only the journal's
/// records (at most a compaction's worth) are held in a dictionary.
struct ReplayStateFile {
    /// The file's bytes as read.
    let bytes: [UInt8]
    /// The cut-offs after the journal.
    private(set) var marks = ReplayLedger.Marks()
    /// Entries added or changed by the journal (and by records applied since the read).
    private(set) var overlay: [[UInt8]: ReplayLedger.Entry] = [:]
    /// How many records the journal holds (and records applied since the read).
    private(set) var journalCount = 0
    /// The file offset after the last good record: where the next record goes (a torn tail is cut there first).
    private(set) var appendOffset = 0
    /// How many entries the snapshot holds.
    private var snapshotCount = 0
    /// The whole state of a version 3, 2 or 1 file, which must be written back as version 4 at once.
    private(set) var olderVersion: ReplayLedger?

    /// An empty state (no file yet).
    init() {
        bytes = []
    }

    /// Reads and validates a file (§5.4.2): anything a writer never writes is `keyStoreCorrupt`; a torn last record
    /// is ignored.
    ///
    /// - Parameters:
    ///   - bytes: The file's bytes.
    ///   - now: The current time, used only to migrate a version 1 file.
    init(bytes: [UInt8], now: UInt64) throws {
        self.bytes = bytes
        guard bytes.count >= 5, Array(bytes[0..<4]) == ReplayLedger.magic else {
            throw ReplayLedger.corrupt("missing SPRG header")
        }
        guard bytes[4] == ReplayLedger.version else {
            let older = try ReplayLedger(olderVersion: bytes, now: now)
            olderVersion = older
            marks = older.marks
            return
        }
        let headerLength = ReplayLedger.headerLength, entryLength = ReplayLedger.entryLength
        guard bytes.count >= headerLength else { throw ReplayLedger.corrupt("header shorter than 41 bytes") }
        let (parsedMarks, count) = try bytes.withUnsafeBufferPointer { buffer in
            let marks = ReplayLedger.Marks(
                evictedIssuedAt: ReplayLedger.uint64(buffer, at: 5), prunedThrough: ReplayLedger.uint64(buffer, at: 13),
                latestIssuedAt: ReplayLedger.uint64(buffer, at: 21), latestAcceptedAt: ReplayLedger.uint64(buffer, at: 29))
            guard [marks.evictedIssuedAt, marks.prunedThrough, marks.latestIssuedAt, marks.latestAcceptedAt]
                .allSatisfy({ $0 < ReplayLedger.timeLimit })
            else { throw ReplayLedger.corrupt("the header holds a time at or past 2^53") }
            return (marks, ReplayLedger.uint32(buffer, at: 37))
        }
        marks = parsedMarks
        snapshotCount = count
        let snapshotEnd = headerLength + count * entryLength
        guard bytes.count >= snapshotEnd else {
            throw ReplayLedger.corrupt("length \(bytes.count) is shorter than the \(count) snapshot entries it announces")
        }
        try Self.validateSnapshot(bytes, count: count)
        // The journal: whole records; a trailing fragment, and a last record whose check fails, are an append cut
        // short by a crash.
        let recordLength = ReplayJournalRecord.length
        let records = (bytes.count - snapshotEnd) / recordLength
        var good = snapshotEnd
        for index in 0..<records {
            let offset = snapshotEnd + index * recordLength
            let matches = bytes.withUnsafeBufferPointer { ReplayJournalRecord.checkMatches($0, at: offset) }
            guard matches else {
                if index == records - 1 { break }  // torn tail
                throw ReplayLedger.corrupt("journal record \(index) (offset \(offset)) fails its check and is not the last")
            }
            let record = try bytes.withUnsafeBufferPointer { try ReplayJournalRecord.parse($0, at: offset, index: index) }
            switch record.change {
            case .add:
                guard entry(for: record.messageID) == nil else {
                    throw ReplayLedger.corrupt("journal record \(index) adds message \(Hex.encode(record.messageID)), already present")
                }
            case .close:
                guard let existing = entry(for: record.messageID), existing.digest != .none else {
                    throw ReplayLedger.corrupt("journal record \(index) closes message \(Hex.encode(record.messageID)), which has no open entry")
                }
            }
            apply(record)
            good = offset + recordLength
        }
        appendOffset = good
    }

    /// Snapshot entries strictly ascending by id, times below 2^53, `issuedAt <= expiresAt`.
    private static func validateSnapshot(_ bytes: [UInt8], count: Int) throws {
        let failure: String? = bytes.withUnsafeBufferPointer { buffer in
            var previousHigh: UInt64 = 0, previousLow: UInt64 = 0
            for index in 0..<count {
                let offset = ReplayLedger.headerLength + index * ReplayLedger.entryLength
                let high = ReplayLedger.uint64(buffer, at: offset), low = ReplayLedger.uint64(buffer, at: offset + 8)
                if index > 0, (high, low) <= (previousHigh, previousLow) {
                    return "snapshot entry \(index) is not after entry \(index - 1) in messageId order"
                }
                previousHigh = high
                previousLow = low
                let issuedAt = ReplayLedger.uint64(buffer, at: offset + 16)
                let expiresAt = ReplayLedger.uint64(buffer, at: offset + 24)
                let acceptedAt = ReplayLedger.uint64(buffer, at: offset + 32)
                if issuedAt >= ReplayLedger.timeLimit || expiresAt >= ReplayLedger.timeLimit
                    || acceptedAt >= ReplayLedger.timeLimit {
                    return "snapshot entry \(index) holds a time at or past 2^53"
                }
                if issuedAt > expiresAt { return "snapshot entry \(index) expires before it was issued" }
            }
            return nil
        }
        if let failure { throw ReplayLedger.corrupt(failure) }
    }

    /// The entry for `id`: from the journal if it holds one, else from the snapshot.
    func entry(for id: [UInt8]) -> ReplayLedger.Entry? {
        if let olderVersion { return olderVersion.entries[id] }
        if let entry = overlay[id] { return entry }
        guard id.count == 16, snapshotCount > 0 else { return nil }
        let keyHigh = ReplayLedger.uint64(id, at: 0), keyLow = ReplayLedger.uint64(id, at: 8)
        return bytes.withUnsafeBufferPointer { buffer -> ReplayLedger.Entry? in
            var low = 0, high = snapshotCount
            while low < high {
                let middle = (low + high) / 2
                let offset = ReplayLedger.headerLength + middle * ReplayLedger.entryLength
                let key = (ReplayLedger.uint64(buffer, at: offset), ReplayLedger.uint64(buffer, at: offset + 8))
                if key == (keyHigh, keyLow) { return Self.entry(buffer, at: offset) }
                if key < (keyHigh, keyLow) { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    private static func entry(_ buffer: UnsafeBufferPointer<UInt8>, at offset: Int) -> ReplayLedger.Entry {
        ReplayLedger.Entry(
            issuedAt: ReplayLedger.uint64(buffer, at: offset + 16), expiresAt: ReplayLedger.uint64(buffer, at: offset + 24),
            acceptedAt: ReplayLedger.uint64(buffer, at: offset + 32),
            digest: ReplayLedger.Digest(high: ReplayLedger.uint64(buffer, at: offset + 40),
                                        low: ReplayLedger.uint64(buffer, at: offset + 48)))
    }

    /// Applies a record on top of what was read (the caller has validated it against the state).
    mutating func apply(_ record: ReplayJournalRecord) {
        switch record.change {
        case .add(let entry):
            overlay[record.messageID] = entry
            marks.admit(entry)
        case .close:
            if var entry = entry(for: record.messageID) {
                entry.digest = .none
                overlay[record.messageID] = entry
            }
        }
        journalCount += 1
    }

    /// The whole state in memory (for compaction and inspection).
    func ledger() -> ReplayLedger {
        if let olderVersion { return olderVersion }
        var entries: [[UInt8]: ReplayLedger.Entry] = [:]
        entries.reserveCapacity(snapshotCount + overlay.count)
        bytes.withUnsafeBufferPointer { buffer in
            for index in 0..<snapshotCount {
                let offset = ReplayLedger.headerLength + index * ReplayLedger.entryLength
                entries[Array(buffer[offset..<(offset + 16)])] = Self.entry(buffer, at: offset)
            }
        }
        for (id, entry) in overlay { entries[id] = entry }
        return ReplayLedger(marks: marks, entries: entries)
    }
}
