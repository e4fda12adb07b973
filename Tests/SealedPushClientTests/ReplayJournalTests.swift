import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

/// `Specs/keyring-v1.md` §5, version 4: the journal, what a reader refuses, the stride, and what a check writes.
/// Files are built here byte by byte from the spec's tables, not with the guard's writer.
@Suite("Replay journal (keyring §5, version 4)")
final class ReplayJournalTests {
    /// This test's directories (its devices' key rings and journals), removed when the test ends.
    let scratch: URL

    init() throws { scratch = try makeTemporaryDirectory() }
    deinit { removeTemporaryDirectory(scratch) }

    func id(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 16) }
    func be(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) } }

    /// Header: magic, version, W, P, L, A, count.
    func header(w: UInt64 = 0, p: UInt64 = 0, l: UInt64 = 0, a: UInt64 = 0, count: UInt32, version: UInt8 = 4) -> [UInt8] {
        Array("SPRG".utf8) + [version] + be(w) + be(p) + be(l) + be(a)
            + [UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
    }

    func entry(_ messageID: [UInt8], issued: UInt64, expires: UInt64, accepted: UInt64 = 0,
               digest: [UInt8] = [UInt8](repeating: 0, count: 16)) -> [UInt8] {
        messageID + be(issued) + be(expires) + be(accepted) + digest
    }

    /// A journal record with its CRC-32 (§5.4.1); `fixCheck: false` leaves a wrong check.
    func record(kind: UInt8, _ messageID: [UInt8], issued: UInt64 = 0, expires: UInt64 = 0, accepted: UInt64 = 0,
                digest: [UInt8] = [UInt8](repeating: 0, count: 16), reserved: [UInt8] = [0, 0, 0],
                fixCheck: Bool = true) -> [UInt8] {
        var bytes = [kind] + reserved + [0, 0, 0, 0] + messageID + be(issued) + be(expires) + be(accepted) + digest
        var check = CRC32.checksum(bytes)
        if !fixCheck { check ^= 1 }
        bytes.replaceSubrange(4..<8, with: [UInt8(check >> 24), UInt8((check >> 16) & 0xff),
                                            UInt8((check >> 8) & 0xff), UInt8(check & 0xff)])
        return bytes
    }

    func write(_ bytes: [UInt8]) throws -> (URL, URL) {
        let directory = try makeDirectory(in: scratch)
        let file = directory.appendingPathComponent(FileReplayGuard.fileName)
        try Data(bytes).write(to: file)
        return (directory, file)
    }

    @Test("CRC-32 known answers (zlib's check value and the fox)")
    func crcKnownAnswers() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
    }

    @Test("a snapshot plus journal built from the spec reads as the rules say")
    func handBuiltFileReads() throws {
        let digest = [UInt8](repeating: 0x5A, count: 16)
        let bytes = header(l: 1_000, a: 1_000, count: 2)
            + entry(id(1), issued: 1_000, expires: 9_000, accepted: 1_000)
            + entry(id(3), issued: 1_000, expires: 9_000, accepted: 1_000, digest: digest)
            + record(kind: 1, id(2), issued: 1_100, expires: 9_000, accepted: 1_100, digest: digest)
            + record(kind: 2, id(2))
            + record(kind: 1, id(4), issued: 1_200, expires: 9_000, accepted: 1_200, digest: digest)
        let (directory, file) = try write(bytes)
        let guardian = FileReplayGuard(directory: directory)
        let state = try guardian.state(now: 1_300)
        #expect(state.count == 4 && state.journalRecords == 3 && state.fileVersion == 4)
        #expect(state.latestIssuedAt == 1_200 && state.latestAcceptedAt == 1_200)
        // id 1 (snapshot, no digest) and id 2 (closed by the journal) are replays; ids 3 and 4 are duplicates.
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), envelopeDigest: digest, issuedAt: 1_000,
                                                        expiresAt: 9_000, now: 1_300) } == .replayed)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(2), envelopeDigest: digest, issuedAt: 1_100,
                                                        expiresAt: 9_000, now: 1_300) } == .replayed)
        #expect(try guardian.checkAndRecord(messageID: id(3), envelopeDigest: digest, issuedAt: 1_000, expiresAt: 9_000,
                                            now: 1_300) == .duplicate(firstAcceptedAt: 1_000))
        #expect(try guardian.checkAndRecord(messageID: id(4), envelopeDigest: digest, issuedAt: 1_200, expiresAt: 9_000,
                                            now: 1_300) == .duplicate(firstAcceptedAt: 1_200))
        #expect([UInt8](try Data(contentsOf: file)) == bytes)  // duplicates and plain refusals write nothing
        // A new id is appended after the last record.
        try guardian.checkAndRecord(messageID: id(5), issuedAt: 1_300, expiresAt: 9_000, now: 1_300)
        let after = [UInt8](try Data(contentsOf: file))
        #expect(after.count == bytes.count + 64 && Array(after[0..<bytes.count]) == bytes)
        #expect(Array(after[bytes.count..<(bytes.count + 64)])
            == record(kind: 1, id(5), issued: 1_300, expires: 9_000, accepted: 1_300))
    }

    @Test("what a writer never writes is keyStoreCorrupt, and the file is left as it was",
          arguments: CorruptCase.allCases)
    func refusals(_ corruptCase: CorruptCase) throws {
        let bytes = corruptCase.bytes(self)
        let (directory, file) = try write(bytes)
        let guardian = FileReplayGuard(directory: directory)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(0x77), issuedAt: 1_000, expiresAt: 9_000,
                                                        now: 1_000) } == .keyStoreCorrupt)
        #expect(errorCode { _ = try guardian.state(now: 1_000) } == .keyStoreCorrupt)
        #expect([UInt8](try Data(contentsOf: file)) == bytes)
    }

    enum CorruptCase: String, CaseIterable, CustomTestStringConvertible {
        case headerTime2to63, headerTimeMax, entryTime2to53, unsorted, duplicatedID, issuedAfterExpiry
        case shorterThanSnapshot, middleRecordBadCheck, unknownKind, reservedNonZero, addExisting, closeAbsent
        case closeTwice, closeWithData, recordTime2to53, version3Unsorted, version3Time2to63, unknownVersion
        var testDescription: String { rawValue }

        func bytes(_ t: ReplayJournalTests) -> [UInt8] {
            let one = t.header(count: 1) + t.entry(t.id(1), issued: 1_000, expires: 9_000)
            let good = t.record(kind: 1, t.id(2), issued: 1_000, expires: 9_000, accepted: 1_000)
            switch self {
            case .headerTime2to63: return t.header(p: 1 << 63, count: 0)
            case .headerTimeMax: return t.header(w: .max, count: 0)
            case .entryTime2to53: return t.header(count: 1) + t.entry(t.id(1), issued: 1_000, expires: 1 << 53)
            case .unsorted:
                return t.header(count: 2) + t.entry(t.id(2), issued: 1, expires: 9) + t.entry(t.id(1), issued: 1, expires: 9)
            case .duplicatedID:
                return t.header(count: 2) + t.entry(t.id(1), issued: 1, expires: 9) + t.entry(t.id(1), issued: 1, expires: 9)
            case .issuedAfterExpiry: return t.header(count: 1) + t.entry(t.id(1), issued: 10, expires: 9)
            case .shorterThanSnapshot: return t.header(count: 2) + t.entry(t.id(1), issued: 1, expires: 9)
            case .middleRecordBadCheck:
                return one + t.record(kind: 1, t.id(2), issued: 1, expires: 9, fixCheck: false)
                    + t.record(kind: 1, t.id(3), issued: 1, expires: 9)
            case .unknownKind: return one + t.record(kind: 3, t.id(2)) + good
            case .reservedNonZero: return one + t.record(kind: 1, t.id(2), issued: 1, expires: 9, reserved: [0, 1, 0]) + good
            case .addExisting: return one + t.record(kind: 1, t.id(1), issued: 1, expires: 9) + good
            case .closeAbsent: return one + t.record(kind: 2, t.id(9)) + good
            case .closeTwice:
                return one + t.record(kind: 1, t.id(5), issued: 1, expires: 9, digest: t.id(0xEE)) + t.record(kind: 2, t.id(5))
                    + t.record(kind: 2, t.id(5)) + good
            case .closeWithData: return one + t.record(kind: 2, t.id(1), issued: 1) + good
            case .recordTime2to53: return one + t.record(kind: 1, t.id(2), issued: 1, expires: 1 << 53) + good
            case .version3Unsorted:
                return t.header(count: 2, version: 3) + t.entry(t.id(2), issued: 1, expires: 9)
                    + t.entry(t.id(1), issued: 1, expires: 9)
            case .version3Time2to63: return t.header(l: 1 << 63, count: 0, version: 3)
            case .unknownVersion: return t.header(count: 0, version: 5)
            }
        }
    }

    @Test("an append cut short is ignored, then cut away by the next writer")
    func tornTail() throws {
        let base = header(l: 1_000, a: 1_000, count: 1) + entry(id(1), issued: 1_000, expires: 9_000, accepted: 1_000)
            + record(kind: 1, id(2), issued: 1_000, expires: 9_000, accepted: 1_000)
        for tail in [Array(record(kind: 1, id(3), issued: 1_000, expires: 9_000)[0..<37]),  // a partial record
                     record(kind: 1, id(3), issued: 1_000, expires: 9_000, fixCheck: false),  // last, check fails
                     [UInt8](repeating: 0, count: 64)] {  // zeros where a record was to be
            let (directory, file) = try write(base + tail)
            let guardian = FileReplayGuard(directory: directory)
            #expect(try guardian.state(now: 1_000).count == 2)
            // id 3's check never returned, so it may open: it is new.
            try guardian.checkAndRecord(messageID: id(3), issuedAt: 1_000, expiresAt: 9_000, now: 1_001)
            let after = [UInt8](try Data(contentsOf: file))
            #expect(after.count == base.count + 64)
            #expect(Array(after[0..<base.count]) == base)
            for known in [id(1), id(2), id(3)] {
                #expect(errorCode { try guardian.checkAndRecord(messageID: known, issuedAt: 1_000, expiresAt: 9_000,
                                                                now: 1_002) } == .replayed)
            }
        }
    }

    /// The outside review: one authentic envelope issued five years ahead, opened while the device clock was as
    /// wrong, moved the cut-offs five years: after the clock was fixed every normal message was `replayed` (and
    /// every resend too) until a manual reset. Version 3 fails every expectation after the jump.
    @Test("one envelope from five years ahead moves the cut-offs by a day at most, and the state heals")
    func strideBoundsOneEnvelope() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let guardian = FileReplayGuard(directory: directory, journalLimit: 1)  // compact (prune) on every record
        let t0: UInt64 = 1_800_000_000, future = t0 + 5 * 365 * 86_400
        try guardian.checkAndRecord(messageID: id(1), issuedAt: t0, expiresAt: t0 + 3_600, now: t0)
        try guardian.checkAndRecord(messageID: id(2), issuedAt: future, expiresAt: future + 3_600, now: future)
        var state = try guardian.state(now: future)
        #expect(state.latestIssuedAt <= t0 + 86_400 && state.latestAcceptedAt <= t0 + 86_400)
        #expect(state.prunedThrough <= t0 + 3_600)  // only id 1 could be dropped
        // The clock is fixed an hour later: a normal message opens, and its resend is a duplicate once a day has
        // passed since the incident (the window is measured up to latestAcceptedAt, at most a day ahead).
        try guardian.checkAndRecord(messageID: id(3), issuedAt: t0 + 3_700, expiresAt: t0 + 7_300, now: t0 + 3_700)
        let later = t0 + 86_400 + 100
        let digest = [UInt8](repeating: 0x42, count: 16)
        #expect(try guardian.checkAndRecord(messageID: id(4), envelopeDigest: digest, issuedAt: later,
                                            expiresAt: later + 3_600, now: later) == .first)
        #expect(try guardian.checkAndRecord(messageID: id(4), envelopeDigest: digest, issuedAt: later,
                                            expiresAt: later + 3_600, now: later + 5) == .duplicate(firstAcceptedAt: later))
        // The far-future id itself stays refused.
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(2), issuedAt: future, expiresAt: future + 3_600,
                                                        now: future) } == .replayed)
        state = try guardian.state(now: later)
        #expect(state.prunedThrough <= t0 + 7_300)
    }

    @Test("a device clock past what the state can hold is invalidArgument, and nothing is written")
    func clockPastStateRange() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let guardian = FileReplayGuard(directory: directory)
        let limit = (UInt64(1) << 53) - 600 - 2_419_200
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), issuedAt: limit, expiresAt: limit + 60,
                                                        now: limit) } == .invalidArgument)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(FileReplayGuard.fileName).path))
        try guardian.checkAndRecord(messageID: id(1), issuedAt: limit - 1, expiresAt: limit + 60, now: limit - 1)
        #expect(try guardian.state(now: limit - 1).count == 1)
    }

    @Test("key ring writers refuse a time at or past 2^53 (a reader would refuse the ring)")
    func keyRingWriterRefusesHugeTimes() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let manager = DeviceKeyManager(directory: directory)
        #expect(errorCode { try manager.create(now: 1 << 53) } == .invalidArgument)
        #expect(errorCode { try manager.createIfNeeded(now: .max) } == .invalidArgument)
        try manager.create(now: (1 << 53) - 1)
        #expect(errorCode { try manager.rotate(now: 1 << 53) } == .invalidArgument)
        _ = try manager.rotate(now: (1 << 53) - 1)
        #expect(try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing()?.keys.count == 2)
    }

    /// Issue 19 §3's bound: at most 4 KiB written per accepted message, amortised, on a full state.
    @Test("a full state writes a 64-byte record per id and a snapshot per 1,024: under 4 KiB per id amortised")
    func bytesWrittenPerID() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let file = directory.appendingPathComponent(FileReplayGuard.fileName)
        let capacity = FileReplayGuard.defaultCapacity
        let start: UInt64 = 1_800_000_000
        var ledger = ReplayLedger()
        for index in 0..<capacity {
            var messageID = [UInt8](repeating: 0, count: 16)
            withUnsafeBytes(of: UInt64(index).bigEndian) { messageID.replaceSubrange(8..<16, with: $0) }
            try ledger.record(messageID: messageID, issuedAt: start + UInt64(index), expiresAt: start + 2_419_200,
                              now: start + UInt64(index), capacity: capacity)
        }
        try Data(ledger.encoded()).write(to: file)
        let guardian = FileReplayGuard(directory: directory)
        var written = 0, snapshots = 0
        var size = try Data(contentsOf: file).count
        let checks = 3 * FileReplayGuard.defaultJournalLimit
        for index in 0..<checks {
            let now = start + UInt64(capacity + index)
            try guardian.checkAndRecord(messageID: id(number: 1 << 32 + index), issuedAt: now, expiresAt: now + 3_600, now: now)
            let newSize = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as! Int
            if newSize == size + 64 { written += 64 } else { written += newSize; snapshots += 1 }
            size = newSize
        }
        #expect(snapshots == 3)
        #expect(size == 41 + 56 * capacity)
        let perID = Double(written) / Double(checks)
        #expect(perID <= 4_096, "\(perID) bytes written per id")
        #expect(try guardian.state(now: start).count == capacity)
    }

    func id(number: Int) -> [UInt8] { (0..<16).map { UInt8(truncatingIfNeeded: number >> (8 * (15 - $0))) } }
}
