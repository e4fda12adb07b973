import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer

/// What the replay guard adds to a notification in the extension, measured beside the open itself: one check of a
/// persisted `FileReplayGuard` (flock, read, validate, look up, append a record, fsync; a compaction every 1,024) with
/// an empty and a full state (16,384 ids, a 918 KB snapshot in version 4), the bytes it writes, and the same check
/// on the in-memory guard at full state (the ledger's CPU alone). Each check includes the envelope's digest (SHA-256), as the receiver computes it for duplicates.
enum ReplayBenchmark {
    static func run(_ report: Report, fixture: Fixture, quick: Bool) throws {
        let (sealed, opener, now) = try fixture.sealedAndOpener()
        let body = sealed.payload
        let envelope = try APNsPayload.extractEnvelope(fromBody: body)
        let openSamples = try Runner.compare([
            Benchmark(name: "open") { count in
                var sink = 0
                for _ in 0..<count { sink &+= try opener.open(body: body, now: now).messageID.count }
                return sink
            }
        ])
        let openNanos = openSamples[0].median

        let capacity = FileReplayGuard.defaultCapacity
        var counter = 0
        func nextID() -> [UInt8] {
            counter += 1
            return (0..<16).map { UInt8(truncatingIfNeeded: counter >> (8 * (15 - $0))) }
        }
        // In memory, full: the ledger's own work per check (evicting one id each time).
        let memory = InMemoryReplayGuard(capacity: capacity)
        for index in 0..<capacity {
            try memory.checkAndRecord(messageID: nextID(), issuedAt: now - 86_400 + UInt64(index) * 86_400 / UInt64(capacity),
                                      expiresAt: now + 2_419_200 - 86_400, now: now)
        }
        // Time moves one second per message, as it would on a device: each check evicts the oldest id.
        var clock = now
        let memorySamples = try Runner.compare([
            Benchmark(name: "memory") { count in
                for _ in 0..<count {
                    clock += 1
                    _ = try memory.checkAndRecord(
                        messageID: nextID(), envelopeDigest: EnvelopeDigest.of(envelope), issuedAt: clock,
                        expiresAt: clock + 3_600, now: clock)
                }
                return count
            }
        ])
        report.add(Row(figure: "replay check, in-memory guard, full (16,384 ids)", ours: memorySamples[0].median,
                       comparison: "open, APNs body → content", theirs: openNanos, ratio: .cost, target: nil))

        // Persisted: wall time per check (the fsync is the point). The mean over 2,048 checks in a row, so the two
        // compactions among them (every 1,024 records: prune, evict, a new snapshot) are paid in their share.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sealedpush-replay-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent(FileReplayGuard.fileName).path
        let file = FileReplayGuard(directory: directory, capacity: capacity)
        let checks = quick ? 1_024 : 2 * FileReplayGuard.defaultJournalLimit
        var fileClock = now
        /// Mean wall time per check, and bytes written per check (a size that grew by 64 was an appended record;
        /// any other change a new snapshot of that size).
        func meanWall() throws -> (nanos: Double, bytes: Double) {
            var size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            var written = 0
            var total: UInt64 = 0
            for _ in 0..<checks {
                fileClock += 1
                let start = Clock.wallNanos()
                _ = try file.checkAndRecord(
                    messageID: nextID(), envelopeDigest: EnvelopeDigest.of(envelope), issuedAt: fileClock,
                    expiresAt: fileClock + 3_600, now: fileClock)
                total += Clock.wallNanos() - start
                let newSize = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                written += newSize == size + 64 ? 64 : newSize
                size = newSize
            }
            return (Double(total) / Double(checks), Double(written) / Double(checks))
        }
        try file.reset()
        let empty = try meanWall()
        // A full state, written from the spec's layout (keyring-v1 §5, version 4: 41-byte header, 56-byte entries by
        // id, no journal yet).
        try Data(specFile(count: capacity, now: fileClock, next: nextID)).write(to: URL(fileURLWithPath: path))
        let full = try meanWall()
        let state = try file.state(now: fileClock)
        print(String(format: "replay: file guard check %.3f ms empty, %.3f ms full (%d ids); %.0f and %.0f bytes written "
                     + "per id; open %.1f µs", empty.nanos / 1e6, full.nanos / 1e6, state.count, empty.bytes, full.bytes,
                     openNanos / 1e3))
        var emptyRow = Row(figure: "replay check, file guard, empty (wall, with fsync; mean of \(checks))", ours: empty.nanos,
                           comparison: "open, APNs body → content (CPU)", theirs: openNanos, ratio: .cost, target: nil)
        emptyRow.unit = "ns"
        report.add(emptyRow)
        var fullRow = Row(figure: "replay check, file guard, full: \(state.count) ids (wall, with fsync; mean of \(checks))",
                          ours: full.nanos, comparison: "file guard, empty", theirs: empty.nanos, ratio: .cost, target: 2)
        fullRow.unit = "ns"
        report.add(fullRow)
        var bytesRow = Row(figure: "replay state bytes written per recorded id, full (amortised over \(checks))",
                           ours: full.bytes, comparison: "issue 19 bound: 4 KiB", theirs: 4_096, ratio: .cost, target: 1)
        bytesRow.unit = "B"
        report.add(bytesRow)
        var versionThreeRow = Row(figure: "replay state bytes written per recorded id, full, version 3 (whole file)",
                                  ours: Double(41 + 56 * capacity), comparison: "version 4, full", theirs: full.bytes,
                                  ratio: .cost, target: nil)
        versionThreeRow.unit = "B"
        report.add(versionThreeRow)
    }

    /// A version 4 replay state of `count` ids issued (and accepted) in the last minute and expiring in a day.
    private static func specFile(count: Int, now: UInt64, next: () -> [UInt8]) -> [UInt8] {
        func be64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) } }
        var entries = (0..<count).map { index in
            (next(), now - 60 + UInt64(index) * 60 / UInt64(count), now + 86_400)
        }
        entries.sort { $0.0.lexicographicallyPrecedes($1.0) }
        var out = Array("SPRG".utf8) + [4] + be64(0) + be64(0) + be64(now) + be64(now)
        out += [UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
        for (id, issued, expires) in entries { out += id + be64(issued) + be64(expires) + be64(issued) + Array(id.reversed()) }
        return out
    }
}
