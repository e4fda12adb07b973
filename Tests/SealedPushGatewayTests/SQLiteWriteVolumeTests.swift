import Foundation
@testable import SealedPushGateway
import Testing

/// What a claim and a finish write to SQLite's WAL: whole pages, so the figure is the count of pages a transaction
/// dirtied (WAL frames), which does not depend on the machine.
///
/// A fan-out's jobs belong to as many devices. With `state` in the `jobs_device` index, every claim and finish also
/// moved each job's entry there, spread over the index's leaves: 29 % of the WAL's bytes when the benchmark's writes
/// (1,000 devices a send, claims of 16) are replayed in SQL, and about a tenth of the gateway's CPU per delivery in
/// `scripts/gateway-bench.sh`. Since migration 12 it keeps only open jobs, the few hundred entries a one-device
/// send's group commit shares, and a claim and a finish touch the open jobs' leaves of their devices again.
@Suite("SQLite write volume")
struct SQLiteWriteVolumeTests {
    @Test func claimAndFinishOfAFanOutWriteFewPages() async throws {
        let harness = try SQLiteHarness()
        try await withMigratedStore(harness) { migrated, fixtures in
            let store = try #require(migrated as? SQLiteGatewayStore)
            // Device ids as apps choose them (random-looking), numbered: the index orders them by the random part, a
            // send lists them by number — what a fan-out's claim takes together lies all over the index.
            let devices = (1...600).map {
                String(UInt32(truncatingIfNeeded: $0 &* 2_654_435_761), radix: 16) + "-\($0)"
            }
            let keys = try await StoreFixtures.register(devices, in: "alpha", store)
            func number(_ deviceID: String) -> Int { Int(deviceID.split(separator: "-")[1])! }
            func send() throws -> NewNotification {
                var notification = try fixtures.notification(appID: "alpha", to: keys)
                notification.jobs.sort { number($0.deviceID) < number($1.deviceID) }
                return notification
            }
            for _ in 1...3 { _ = try await store.enqueue(try send()) }

            try await store.checkpoint()
            let claimed = try await store.claim(
                owner: "w", limit: 16, leaseDuration: .seconds(60), now: StoreFixtures.now)
            #expect(claimed.count == 16 && Set(claimed.map(\.deviceID)).count == 16)
            let claimFrames = try Self.walFrames(harness.path)

            try await store.checkpoint()
            let ends = claimed.map {
                JobFinish(
                    jobID: $0.id, owner: "w", outcome: .sent(apnsID: "id-\($0.id)"), requests: 1,
                    transientReason: nil, now: StoreFixtures.now)
            }
            #expect(try await store.finish(ends) == Array(repeating: true, count: 16))
            let finishFrames = try Self.walFrames(harness.path)

            #expect(claimFrames <= Self.bound, "a claim of 16 jobs of 16 devices wrote \(claimFrames) pages")
            #expect(finishFrames <= Self.bound, "a finish of 16 jobs of 16 devices wrote \(finishFrames) pages")
        }
    }

    /// A group commit of 16 one-device sends into a store that holds 4,000 earlier ones. A notification's id keys two
    /// indexes (`notifications`' primary key and `jobs`' unique (notification, device)): with random (version 4)
    /// ids each send of the batch dirtied a leaf of its own in both; with the gateway's time-ordered ids
    /// (``TimeOrderedUUID``, version 7) they all go to the last leaf of each. Measured: 76–84 pages with random ids,
    /// 49–53 with the gateway's (the rest: the devices' and the message ids' index leaves, one per device and send).
    @Test func aBatchOfSendsWithTheGatewaysIDsWritesFewPages() async throws {
        let harness = try SQLiteHarness()
        try await withMigratedStore(harness) { migrated, fixtures in
            let store = try #require(migrated as? SQLiteGatewayStore)
            let keys = try await StoreFixtures.register((1...16).map { "device-\($0)" }, in: "alpha", store)
            let devices = keys.keys.sorted()
            func batch() throws -> [NewNotification] {
                try devices.map { deviceID in
                    try fixtures.notification(
                        appID: "alpha", to: [deviceID: keys[deviceID]!], id: TimeOrderedUUID.make())
                }
            }
            for _ in 1...250 {
                for result in try await store.enqueueBatch(try batch()) { _ = try result.get() }
            }
            try await store.checkpoint()
            for result in try await store.enqueueBatch(try batch()) { _ = try result.get() }
            let frames = try Self.walFrames(harness.path)
            #expect(frames <= 64, "a group commit of 16 one-device sends wrote \(frames) pages")
        }
    }

    /// One-device sends as the gateway makes them under load: handed over (enqueued `claimed` under the node's lease)
    /// and finished `sent` a moment later, to 1,000 devices with random-looking ids, after 3,040 such sends. Counts
    /// the pages of one group commit of 16 sends and of the group finishing them. Measured: 64–65 pages for the
    /// sends while `jobs_device` held every job (a leaf per device) and `job_messages` had a second key index
    /// (migration 12); 36–38 while message ids were wholly random, a leaf of `job_messages_message` per send; 26 since
    /// they start with the time in milliseconds (``MessageID``, `Specs/envelope-v1.md` §3) and append to that index
    /// (finishing them: 8, then 9, now 5).
    @Test func sendsHandedOverAndFinishedWriteFewPages() async throws {
        let harness = try SQLiteHarness()
        try await withMigratedStore(harness) { migrated, fixtures in
            let store = try #require(migrated as? SQLiteGatewayStore)
            let devices = (1...1_000).map { String(UInt32(truncatingIfNeeded: $0 &* 2_654_435_761), radix: 16) }
            let keys = try await StoreFixtures.register(devices, in: "alpha", store)
            let lease = JobLease(owner: "node/boot", expiresAt: StoreFixtures.now.addingTimeInterval(90))
            var next = 0
            func batch() throws -> [NewNotification] {
                try (0..<16).map { _ in
                    next += 1
                    let deviceID = devices[(next &* 7_919) % devices.count]
                    var notification = try fixtures.notification(
                        appID: "alpha", to: [deviceID: keys[deviceID]!], id: TimeOrderedUUID.make())
                    notification.lease = lease
                    return notification
                }
            }
            func sendAndFinish(checkpointBetween: Bool) async throws -> (enqueue: Int, finish: Int) {
                if checkpointBetween { try await store.checkpoint() }
                let claimed = try await store.enqueueBatch(try batch()).flatMap { try $0.get().claimed }
                #expect(claimed.count == 16, "every send handed over")
                let enqueueFrames = checkpointBetween ? try Self.walFrames(harness.path) : 0
                if checkpointBetween { try await store.checkpoint() }
                let ends = claimed.map {
                    JobFinish(
                        jobID: $0.id, owner: lease.owner, outcome: .sent(apnsID: "id-\($0.id)"), requests: 1,
                        transientReason: nil, now: StoreFixtures.now)
                }
                #expect(try await store.finish(ends) == Array(repeating: true, count: claimed.count))
                return (enqueueFrames, checkpointBetween ? try Self.walFrames(harness.path) : 0)
            }
            for _ in 1...190 { _ = try await sendAndFinish(checkpointBetween: false) }
            let frames = try await sendAndFinish(checkpointBetween: true)
            #expect(frames.enqueue <= 30, "a group commit of 16 one-device sends wrote \(frames.enqueue) pages")
            #expect(frames.finish <= 12, "finishing 16 one-device sends wrote \(frames.finish) pages")
        }
    }

    /// `jobs_app_due` is the index claims walk (`queued` jobs by app and due time, and `claimed` ones). Until migration
    /// 13 it held every job kept (100,000 kept jobs: 435 pages), and each finish moved the job's entry into the ended
    /// states' part. One-device sends as the gateway makes them under load (enqueued `claimed` under the node's lease)
    /// are in it until they are finished `sent`; then it holds nothing (the cells of its leaf pages, from `dbstat`),
    /// and the queue still works through it.
    @Test func finishedJobsLeaveTheDueIndex() async throws {
        let harness = try SQLiteHarness()
        try await withMigratedStore(harness) { migrated, fixtures in
            let store = try #require(migrated as? SQLiteGatewayStore)
            func entries() async throws -> Int {
                try await store.read("counting jobs_app_due's entries") { db in
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT COALESCE(SUM(ncell), 0) FROM dbstat WHERE name = 'jobs_app_due' AND pagetype = 'leaf'
                            """) ?? -1
                }
            }
            let devices = (1...16).map { "device-\($0)" }
            let keys = try await StoreFixtures.register(devices, in: "alpha", store)
            let lease = JobLease(owner: "node/boot", expiresAt: StoreFixtures.now.addingTimeInterval(90))
            let batch = try (0..<64).map { index in
                let deviceID = devices[index % devices.count]
                var notification = try fixtures.notification(appID: "alpha", to: [deviceID: keys[deviceID]!])
                notification.lease = lease
                return notification
            }
            let claimed = try await store.enqueueBatch(batch).flatMap { try $0.get().claimed }
            #expect(claimed.count == 64, "every send handed over")
            #expect(try await entries() == 64, "the open jobs are in the index (and the count works)")

            let ends = claimed.map {
                JobFinish(
                    jobID: $0.id, owner: lease.owner, outcome: .sent(apnsID: "id-\($0.id)"), requests: 1,
                    transientReason: nil, now: StoreFixtures.now)
            }
            #expect(try await store.finish(ends) == Array(repeating: true, count: 64))
            let left = try await entries()
            #expect(left == 0, "\(left) entries of 64 finished jobs are still in jobs_app_due")

            _ = try await store.enqueue(try fixtures.notification(appID: "alpha", to: ["device-1": keys["device-1"]!]))
            let next = try await store.claim(
                owner: "node/boot", limit: 16, leaseDuration: .seconds(60), now: StoreFixtures.now)
            #expect(next.count == 1, "a queued send is claimed through the index")
        }
    }

    /// A checkpoint copies every page changed since the last one into the database file; under load the same leaves
    /// change in every commit, so SQLite's default (a checkpoint by the commit that passes 1,000 WAL pages) wrote them
    /// back several times a second. The store lets the WAL reach 8,000 pages first: after ≈ 2,000 pages of one-device
    /// sends they are all still in the WAL (with the default, a checkpoint has restarted it: fewer than 1,000).
    @Test func theWALIsCopiedBackOnlyEveryEightThousandPages() async throws {
        let harness = try SQLiteHarness()
        try await withMigratedStore(harness) { migrated, fixtures in
            let store = try #require(migrated as? SQLiteGatewayStore)
            let devices = (1...200).map { "device-\($0)" }
            let keys = try await StoreFixtures.register(devices, in: "alpha", store)
            try await store.checkpoint()
            var next = 0
            var frames = 0
            while frames < 2_000 && next < 16 * 1_000 {  // 2,000 pages take ≈ 60 group commits; at most 1,000
                let batch = try (0..<16).map { _ in
                    next += 1
                    let deviceID = devices[(next &* 7_919) % devices.count]
                    return try fixtures.notification(
                        appID: "alpha", to: [deviceID: keys[deviceID]!], id: TimeOrderedUUID.make())
                }
                _ = try await store.enqueueBatch(batch)
                frames = try Self.framesInWAL(harness.path)
            }
            #expect(frames >= 2_000, "the WAL holds \(frames) pages since the last checkpoint")
        }
    }

    /// With SQLite's default `temp_store` a transaction with savepoints (each send of a group commit had one until
    /// stop 32) wrote its statement journal to a temporary file, created, written and unlinked about 190 times a
    /// second under `scripts/gateway-load.sh` (one device per send: 7 % of the throughput). Every connection of the
    /// store keeps statement journals in memory.
    @Test func statementJournalsStayInMemory() async throws {
        let harness = try SQLiteHarness()
        try await withMigratedStore(harness) { migrated, _ in
            let store = try #require(migrated as? SQLiteGatewayStore)
            let mode = try await store.read("temp_store") { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") }
            #expect(mode == 2, "temp_store \(String(describing: mode)): 2 is MEMORY")
        }
    }

    /// The most pages a claim or a finish of 16 jobs may write: the jobs' rows, `jobs_app_due`'s leaves and their
    /// parents, and `jobs_device`'s leaves of the claimed jobs' devices. Measured with a token of its own per device:
    /// 7 and 10 while `jobs_device` held every job without its state (migration 11); 19 and 22 since it keeps only
    /// open jobs (migration 12: a claim moves the entries of the jobs it takes, a finish removes them — what it costs a
    /// fan-out, in exchange for a one-device send's leaf, `sendsHandedOverAndFinishedWriteFewPages`). With `state` in
    /// the index (before migration 11), 20 and 21 when the fixture's devices still shared tokens.
    static let bound = 24

    /// Frames written to the WAL since it last restarted (a checkpoint copied it all and a later commit began again
    /// at its start): the frames from the start whose salts are the header's (a restart writes new salts; frames
    /// after the last one written keep their old ones). Big-endian fields: salts at 16 and 20 of the 32-byte header,
    /// at 8 and 12 of each frame's 24-byte header.
    private static func framesInWAL(_ databasePath: String) throws -> Int {
        let wal = try Data(contentsOf: URL(fileURLWithPath: databasePath + "-wal"))
        guard wal.count >= 32 else { return 0 }
        func word(_ offset: Int) -> UInt32 {
            wal[wal.startIndex + offset..<wal.startIndex + offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        let pageSize = Int(word(8))
        let salts = (word(16), word(20))
        var frames = 0
        var offset = 32
        while offset + 24 + pageSize <= wal.count, (word(offset + 8), word(offset + 12)) == salts {
            frames += 1
            offset += 24 + pageSize
        }
        return frames
    }

    /// Frames in the WAL file: a 32-byte header, then each frame a 24-byte header and a page.
    private static func walFrames(_ databasePath: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: databasePath + "-wal")
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        guard size > 32 else { return 0 }
        return (size - 32) / (4_096 + 24)
    }
}
