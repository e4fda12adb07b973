import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer

/// What the replay guard adds to a notification in the extension, measured beside the open itself: one check of a
/// persisted `FileReplayGuard` (flock, read, parse, record, write, fsync, rename) with an empty and a full state
/// (16,384 ids, 918 KB in version 3), and the same check on the in-memory guard at full state (the ledger's CPU
/// alone). Each check includes the envelope's digest (SHA-256), as the receiver computes it for duplicates.
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

        // Persisted: wall time per check (the fsync is the point), median of a few dozen.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sealedpush-replay-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = FileReplayGuard(directory: directory, capacity: capacity)
        let checks = quick ? 15 : 41
        func medianWall(_ body: () throws -> Void) rethrows -> Double {
            var times: [Double] = []
            for _ in 0..<checks {
                let start = Clock.wallNanos()
                try body()
                times.append(Double(Clock.wallNanos() - start))
            }
            return times.sorted()[times.count / 2]
        }
        let empty = try medianWall {
            try file.reset()
            _ = try file.checkAndRecord(
                messageID: nextID(), envelopeDigest: EnvelopeDigest.of(envelope), issuedAt: now, expiresAt: now + 3_600,
                now: now)
        }
        // A full state, written from the spec's layout (keyring-v1 §5: 41-byte header, 56-byte entries by id).
        try Data(specFile(count: capacity, now: now, next: nextID)).write(
            to: directory.appendingPathComponent(FileReplayGuard.fileName))
        var fileClock = now
        let full = try medianWall {
            fileClock += 1
            _ = try file.checkAndRecord(
                messageID: nextID(), envelopeDigest: EnvelopeDigest.of(envelope), issuedAt: fileClock,
                expiresAt: fileClock + 3_600, now: fileClock)
        }
        let state = try file.state(now: now)
        print(String(format: "replay: file guard check %.2f ms empty, %.2f ms full (%d ids); open %.1f µs",
                     empty / 1e6, full / 1e6, state.count, openNanos / 1e3))
        var emptyRow = Row(figure: "replay check, file guard, empty (wall, with fsync)", ours: empty,
                           comparison: "open, APNs body → content (CPU)", theirs: openNanos, ratio: .cost, target: nil)
        emptyRow.unit = "ns"
        report.add(emptyRow)
        var fullRow = Row(figure: "replay check, file guard, full: \(state.count) ids (wall, with fsync)", ours: full,
                          comparison: "open, APNs body → content (CPU)", theirs: openNanos, ratio: .cost, target: nil)
        fullRow.unit = "ns"
        report.add(fullRow)
    }

    /// A version 3 replay state of `count` ids issued (and accepted) in the last minute and expiring in a day.
    private static func specFile(count: Int, now: UInt64, next: () -> [UInt8]) -> [UInt8] {
        func be64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) } }
        var entries = (0..<count).map { index in
            (next(), now - 60 + UInt64(index) * 60 / UInt64(count), now + 86_400)
        }
        entries.sort { $0.0.lexicographicallyPrecedes($1.0) }
        var out = Array("SPRG".utf8) + [3] + be64(0) + be64(0) + be64(now) + be64(now)
        out += [UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
        for (id, issued, expires) in entries { out += id + be64(issued) + be64(expires) + be64(issued) + Array(id.reversed()) }
        return out
    }
}
