import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

@Suite("Replay guard")
struct ReplayGuardTests {
    func id(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 16) }

    func id(number: Int) -> [UInt8] {
        (0..<16).map { UInt8(truncatingIfNeeded: number >> (8 * (15 - $0))) }
    }

    @Test("file guard: a replay is rejected across a restart of the store")
    func replayAcrossRestart() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        try FileReplayGuard(directory: directory).checkAndRecord(messageID: id(1), issuedAt: 100, expiresAt: 200, now: 100)
        // A new instance (a new process) reads the persisted state.
        let restarted = FileReplayGuard(directory: directory)
        #expect(errorCode {
            try restarted.checkAndRecord(messageID: id(1), issuedAt: 100, expiresAt: 200, now: 101)
        } == .replayed)
        try restarted.checkAndRecord(messageID: id(2), issuedAt: 100, expiresAt: 200, now: 101)
        let attributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent(FileReplayGuard.fileName).path
        )
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("expiry and not-before by the injected clock, at the boundary seconds")
    func clockBoundaries() throws {
        let guardian = InMemoryReplayGuard()
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), issuedAt: 0, expiresAt: 500, now: 500) } == .expired)
        try guardian.checkAndRecord(messageID: id(1), issuedAt: 0, expiresAt: 500, now: 499)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), issuedAt: 0, expiresAt: 500, now: 499) } == .replayed)
        #expect(errorCode { try guardian.checkAndRecord(messageID: [1, 2], issuedAt: 0, expiresAt: 500, now: 1) } == .invalidArgument)
        // 600 s of skew is allowed, 601 is not.
        try guardian.checkAndRecord(messageID: id(2), issuedAt: 1_600, expiresAt: 2_000, now: 1_000)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(3), issuedAt: 1_601, expiresAt: 2_000, now: 1_000) }
            == .notYetValid)
    }

    /// `Specs/keyring-v1.md` §5.1 rule 1: a lifetime the envelope steps refuse (over 28 days) is `invalidArgument`
    /// when a guard is called with it directly, and nothing past `now + 600 + 28 days` is remembered. An outside
    /// audit found `expiresAt` = 2^64 − 1 recorded, after which the file could not be read again.
    @Test("a lifetime over 28 days is invalidArgument and leaves the file readable")
    func lifetimeBound() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let guardian = FileReplayGuard(directory: directory)
        let now: UInt64 = 1_800_000_000
        let day: UInt64 = 86_400
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), issuedAt: now, expiresAt: .max, now: now) }
            == .invalidArgument)
        #expect(errorCode {
            try guardian.checkAndRecord(messageID: id(2), issuedAt: now, expiresAt: now + 28 * day + 1, now: now)
        } == .invalidArgument)
        #expect(errorCode {
            try InMemoryReplayGuard().checkAndRecord(messageID: id(3), issuedAt: 0, expiresAt: now, now: 1)
        } == .invalidArgument)
        try guardian.checkAndRecord(messageID: id(4), issuedAt: now, expiresAt: now + 28 * day, now: now)
        // The file still reads: a new instance refuses the recorded id as a replay and accepts a new one.
        let restarted = FileReplayGuard(directory: directory)
        #expect(errorCode {
            try restarted.checkAndRecord(messageID: id(4), issuedAt: now, expiresAt: now + 28 * day, now: now + 1)
        } == .replayed)
        try restarted.checkAndRecord(messageID: id(5), issuedAt: now, expiresAt: now + day, now: now + 1)
    }

    @Test("file format: a 41-byte header and 56 bytes per snapshot id, 64 per journal record; compaction prunes")
    func fileFormatAndPruning() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let guardian = FileReplayGuard(directory: directory, capacity: 3, journalLimit: 2)
        let file = directory.appendingPathComponent(FileReplayGuard.fileName)
        // The first id writes a snapshot (no file yet); the second is a journal record.
        try guardian.checkAndRecord(messageID: id(1), issuedAt: 100, expiresAt: 110, now: 100)
        #expect([UInt8](try Data(contentsOf: file)).count == 41 + 56)
        try guardian.checkAndRecord(messageID: id(2), issuedAt: 100, expiresAt: 120, now: 100)
        let bytes = [UInt8](try Data(contentsOf: file))
        #expect(bytes.count == 41 + 56 + 64)
        #expect(Array(bytes[0..<5]) == Array("SPRG".utf8) + [4])
        #expect(bytes[97] == 1 && Array(bytes[105..<121]) == id(2))  // an add record for id 2
        // At 111 (a message issued at 111) the journal reaches 2 records: compaction prunes id 1 (expired at 110),
        // and prunedThrough is the largest expiresAt dropped, 110 (version 3 set it to min(now, L) = 111).
        try guardian.checkAndRecord(messageID: id(3), issuedAt: 111, expiresAt: 200, now: 111)
        #expect([UInt8](try Data(contentsOf: file)).count == 41 + 2 * 56)
        let state = try guardian.state(now: 111)
        #expect(state.count == 2)
        #expect(state.prunedThrough == 110)
        #expect(state.latestIssuedAt == 111)
        #expect(state.evictedIssuedAt == 0)
        #expect(state.journalRecords == 0 && state.fileVersion == 4)
    }

    @Test("overflow evicts the ids issued earliest; only messages that could be evicted ones are refused")
    func overflowByIssueTime() throws {
        let guardian = InMemoryReplayGuard(capacity: 3)
        // Three long-lived messages issued at 100, 200, 300 (each lives 28 days).
        for (index, issued) in [100, 200, 300].enumerated() {
            try guardian.checkAndRecord(
                messageID: id(UInt8(index + 1)), issuedAt: UInt64(issued), expiresAt: UInt64(issued) + 2_419_200, now: 400)
        }
        // A fourth, short-lived (one hour), issued now: it opens, and the id issued at 100 is evicted.
        try guardian.checkAndRecord(messageID: id(4), issuedAt: 400, expiresAt: 4_000, now: 400)
        // The evicted id and anything issued no later than it is refused (fail closed)...
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), issuedAt: 100, expiresAt: 2_419_300, now: 401) }
            == .replayed)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(9), issuedAt: 99, expiresAt: 5_000, now: 401) }
            == .replayed)
        // ...but a never-seen message issued after it opens, however short its ttl.
        try guardian.checkAndRecord(messageID: id(10), issuedAt: 101, expiresAt: 500, now: 401)
        try guardian.checkAndRecord(messageID: id(11), issuedAt: 401, expiresAt: 402, now: 401)
    }

    /// Review item 1: a full state (16,384 28-day envelopes over 27 days, ≈ 585 a day) refused a fresh
    /// one-hour message as "not after the overflow watermark" (the watermark was the largest evicted expiresAt).
    @Test("review item 1: a full guard still opens a fresh short-lived message")
    func fullGuardOpensFreshMessage() throws {
        let guardian = InMemoryReplayGuard()  // default capacity, 16,384
        let start: UInt64 = 1_800_000_000
        let count = FileReplayGuard.defaultCapacity + 100
        let now = start + 27 * 86_400
        for index in 0..<count {
            let issued = start + UInt64(index) * (27 * 86_400) / UInt64(count)
            try guardian.checkAndRecord(
                messageID: id(number: index), issuedAt: issued, expiresAt: issued + 2_419_200, now: max(issued, start))
        }
        try guardian.checkAndRecord(messageID: id(number: 1 << 40), issuedAt: now, expiresAt: now + 3_600, now: now)
    }

    /// Review item 1, sizing: 5,000 messages a day for 28 days with 28-day ttls; every never-seen message issued
    /// less than a day before `now` must still open (delivered late, e.g. after the device was offline).
    @Test("review item 1: 5,000 a day refuses none issued in the last day")
    func sizedForFiveThousandADay() throws {
        let guardian = InMemoryReplayGuard()
        let start: UInt64 = 1_800_000_000
        let perDay = 5_000
        var now = start
        for index in 0..<(28 * perDay) {
            now = start + UInt64(index) * 86_400 / UInt64(perDay)
            try guardian.checkAndRecord(
                messageID: id(number: index), issuedAt: now, expiresAt: now + 2_419_200, now: now)
        }
        // Late arrivals issued 23 h 59 min, 12 h and 1 min ago, never seen before.
        for (offset, age) in [86_340, 43_200, 60].enumerated() {
            let issued = now - UInt64(age)
            try guardian.checkAndRecord(
                messageID: id(number: 1_000_000 + offset), issuedAt: issued, expiresAt: issued + 2_419_200, now: now)
        }
    }

    /// Review item 2: an authentic envelope issued years ahead opened today and was remembered until then.
    @Test("review item 2: far-future issuedAt is refused and never remembered")
    func farFutureRefused() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let guardian = FileReplayGuard(directory: directory)
        let now: UInt64 = 1_800_000_000
        let fiveYears: UInt64 = 5 * 365 * 86_400
        #expect(errorCode {
            try guardian.checkAndRecord(messageID: id(1), issuedAt: now + fiveYears, expiresAt: now + fiveYears + 3_600, now: now)
        } == .notYetValid)
        #expect(try guardian.state(now: now).count == 0)
        try guardian.checkAndRecord(messageID: id(2), issuedAt: now, expiresAt: now + 60, now: now)
        #expect(try guardian.state(now: now).latestExpiresAt == now + 60)
    }

    /// Review item 3: open A (1 h), open B with the clock two hours ahead (A pruned), open A again at the real
    /// time: A opened twice.
    @Test("review item 3: a clock that goes forward then back cannot make an id open twice")
    func clockForwardThenBack() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let guardian = FileReplayGuard(directory: directory)
        let real: UInt64 = 1_800_000_000
        try guardian.checkAndRecord(messageID: id(0xA), issuedAt: real, expiresAt: real + 3_600, now: real)
        try guardian.checkAndRecord(messageID: id(0xB), issuedAt: real + 5, expiresAt: real + 86_400, now: real + 7_200)
        #expect(errorCode {
            try guardian.checkAndRecord(messageID: id(0xA), issuedAt: real, expiresAt: real + 3_600, now: real + 10)
        } == .replayed)
        // A fresh message at the real time still opens.
        try guardian.checkAndRecord(messageID: id(0xC), issuedAt: real + 10, expiresAt: real + 3_600, now: real + 10)
    }

    @Test("pruned ids stay refused when the clock goes back past them")
    func prunedStaysRefused() throws {
        let guardian = InMemoryReplayGuard()
        try guardian.checkAndRecord(messageID: id(1), issuedAt: 1_000, expiresAt: 1_100, now: 1_000)
        // Real time moves on (a message issued at 2,000), and id 1 is pruned at 2,000.
        try guardian.checkAndRecord(messageID: id(2), issuedAt: 2_000, expiresAt: 9_000, now: 2_000)
        // The device clock is then set back to 1,050: id 1 is within its lifetime by that clock.
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), issuedAt: 1_000, expiresAt: 1_100, now: 1_050) }
            == .replayed)
    }

    /// Review item 11: stale `replay-v1.bin.tmp-*` files were never removed.
    @Test("review item 11: stale temporaries are removed after a successful write")
    func staleTemporariesRemoved() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let stale = directory.appendingPathComponent(FileReplayGuard.fileName + ".tmp-deadbeef")
        try Data("partial".utf8).write(to: stale)
        try FileReplayGuard(directory: directory).checkAndRecord(messageID: id(1), issuedAt: 1, expiresAt: 9, now: 1)
        #expect(!FileManager.default.fileExists(atPath: stale.path))
    }

    @Test("a version 1 file is migrated without letting a recorded or evicted id open again")
    func migratesVersion1() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let file = directory.appendingPathComponent(FileReplayGuard.fileName)
        // Version 1: magic, 0x01, watermark 5,000 (an evicted id expired at 5,000), one entry (id 7, expires 9,000).
        var legacy = Array("SPRG".utf8) + [1]
        legacy += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(5_000) >> (56 - 8 * UInt64($0))) }
        legacy += [0, 0, 0, 1] + id(7)
        legacy += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(9_000) >> (56 - 8 * UInt64($0))) }
        try Data(legacy).write(to: file)
        let guardian = FileReplayGuard(directory: directory)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(7), issuedAt: 1_000, expiresAt: 9_000, now: 2_000) }
            == .replayed)
        // The evicted id (issued before the migration) is refused even after failed checks; a message issued after
        // the migration opens.
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(8), issuedAt: 1_500, expiresAt: 5_000, now: 2_050) }
            == .replayed)
        try guardian.checkAndRecord(messageID: id(9), issuedAt: 2_001, expiresAt: 5_000, now: 2_100)
        #expect([UInt8](try Data(contentsOf: file))[4] == 4)  // written back as the current version
    }

    @Test("corrupt state is reported, not silently reset; reset() is explicit")
    func corruption() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let file = directory.appendingPathComponent(FileReplayGuard.fileName)
        try Data("SPRG\u{2}garbage".utf8).write(to: file)
        let guardian = FileReplayGuard(directory: directory)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), issuedAt: 1, expiresAt: 10, now: 1) }
            == .keyStoreCorrupt)
        #expect(try Data(contentsOf: file) == Data("SPRG\u{2}garbage".utf8))
        try guardian.reset()
        try guardian.checkAndRecord(messageID: id(1), issuedAt: 1, expiresAt: 10, now: 1)
    }

    @Test("the guard never creates its directory")
    func noDirectory() throws {
        let missing = try makeTemporaryDirectory(create: false)
        defer { removeTemporaryDirectory(missing) }
        #expect(errorCode {
            try FileReplayGuard(directory: missing).checkAndRecord(messageID: id(1), issuedAt: 1, expiresAt: 9, now: 1)
        } == .io)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test("app and extension recording at once: no id lost, each id accepted exactly once")
    func concurrentRecording() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let accepted = Counter()
        // 4 "processes" (separate guard instances, separate lock descriptors) each record ids 0..<50 concurrently.
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let guardian = FileReplayGuard(directory: directory)
            for value in 0..<50 {
                var messageID = [UInt8](repeating: 0, count: 16)
                messageID[15] = UInt8(value)
                if (try? guardian.checkAndRecord(messageID: messageID, issuedAt: 1, expiresAt: 1000, now: 1)) != nil {
                    accepted.increment()
                }
            }
        }
        #expect(accepted.value == 50)
        let data = try Data(contentsOf: directory.appendingPathComponent(FileReplayGuard.fileName))
        // Version 4: the first id made a snapshot (41-byte header, 56 bytes), the other 49 are 64-byte records.
        #expect(data.count == 41 + 56 + 49 * 64)
        #expect(try FileReplayGuard(directory: directory).state(now: 1).count == 50)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
