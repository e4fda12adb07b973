import SealedPushCore

/// One 64-byte record of the replay journal (`Specs/keyring-v1.md` §5.4.1): an id recorded (`add`) or an entry's
/// duplicate window closed (`close`).
struct ReplayJournalRecord: Equatable {
    /// What the record does.
    enum Change: Equatable {
        /// Puts the entry in the set (5.1.1).
        case add(ReplayLedger.Entry)
        /// Sets the entry's digest to none (5.5).
        case close
    }

    static let length = 64
    static let addKind: UInt8 = 0x01
    static let closeKind: UInt8 = 0x02

    var messageID: [UInt8]
    var change: Change

    /// The record's 64 bytes, with its CRC-32 check.
    func encoded() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.length)
        for index in 0..<16 { out[8 + index] = messageID[index] }
        switch change {
        case .add(let entry):
            out[0] = Self.addKind
            ReplayLedger.put(entry.issuedAt, into: &out, at: 24)
            ReplayLedger.put(entry.expiresAt, into: &out, at: 32)
            ReplayLedger.put(entry.acceptedAt, into: &out, at: 40)
            ReplayLedger.put(entry.digest.high, into: &out, at: 48)
            ReplayLedger.put(entry.digest.low, into: &out, at: 56)
        case .close:
            out[0] = Self.closeKind
        }
        let check = CRC32.checksum(out)
        out[4] = UInt8(truncatingIfNeeded: check >> 24)
        out[5] = UInt8(truncatingIfNeeded: check >> 16)
        out[6] = UInt8(truncatingIfNeeded: check >> 8)
        out[7] = UInt8(truncatingIfNeeded: check)
        return out
    }

    /// Whether the 64 bytes at `offset` carry a matching check (a record cut short by a crash does not).
    static func checkMatches(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        let stored = UInt32(bytes[offset + 4]) << 24 | UInt32(bytes[offset + 5]) << 16
            | UInt32(bytes[offset + 6]) << 8 | UInt32(bytes[offset + 7])
        // The record with its check field as zeros, without copying it (this runs for every record of every read).
        var crc = CRC32.update(CRC32.start, bytes[offset..<(offset + 4)])
        crc = CRC32.update(crc, repeatElement(UInt8(0), count: 4))
        crc = CRC32.update(crc, bytes[(offset + 8)..<(offset + length)])
        return CRC32.finish(crc) == stored
    }

    /// Parses a record whose check matched; refuses what a writer never writes.
    ///
    /// - Parameters:
    ///   - bytes: The file.
    ///   - offset: The record's offset.
    ///   - index: The record's index in the journal (for the message).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, index: Int) throws -> ReplayJournalRecord {
        func corrupt(_ detail: String) -> SealedPushError {
            SealedPushError(.keyStoreCorrupt, "replay guard file is corrupt: journal record \(index) (offset \(offset)) \(detail)")
        }
        guard bytes[offset + 1] == 0, bytes[offset + 2] == 0, bytes[offset + 3] == 0 else {
            throw corrupt("has non-zero reserved bytes")
        }
        let id = Array(bytes[(offset + 8)..<(offset + 24)])
        switch bytes[offset] {
        case addKind:
            let entry = ReplayLedger.Entry(
                issuedAt: ReplayLedger.uint64(bytes, at: offset + 24),
                expiresAt: ReplayLedger.uint64(bytes, at: offset + 32),
                acceptedAt: ReplayLedger.uint64(bytes, at: offset + 40),
                digest: ReplayLedger.Digest(high: ReplayLedger.uint64(bytes, at: offset + 48),
                                            low: ReplayLedger.uint64(bytes, at: offset + 56)))
            guard entry.issuedAt < ReplayLedger.timeLimit, entry.expiresAt < ReplayLedger.timeLimit,
                  entry.acceptedAt < ReplayLedger.timeLimit
            else { throw corrupt("holds a time at or past 2^53") }
            guard entry.issuedAt <= entry.expiresAt else { throw corrupt("expires before it was issued") }
            return ReplayJournalRecord(messageID: id, change: .add(entry))
        case closeKind:
            guard bytes[(offset + 24)..<(offset + length)].allSatisfy({ $0 == 0 }) else {
                throw corrupt("closes an entry but has non-zero unused bytes")
            }
            return ReplayJournalRecord(messageID: id, change: .close)
        default:
            throw corrupt("has unknown kind \(bytes[offset])")
        }
    }
}
