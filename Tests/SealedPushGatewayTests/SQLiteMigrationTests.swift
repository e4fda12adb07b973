import Foundation
import GRDB
import SealedPushCore
@testable import SealedPushGateway
import Testing

/// Migrations that rebuild a table SQLite cannot alter: 7 the jobs table (its CHECK constraint), 12 `job_messages`
/// (its key). A database with jobs keeps every job, its id and state, the id sequence, and each job's message id.
@Suite("SQLite migrations 7 and 12")
struct SQLiteMigrationTests {
    @Test func rebuildKeepsJobsAndIDs() async throws {
        let harness = try SQLiteHarness()
        let store = try SQLiteGatewayStore(path: harness.path)
        #expect(try await store.migrate(upTo: 6) == 6)
        // The app as version 6 stores it (today's putApp writes columns of later versions).
        try await harness.execute(
            "INSERT INTO apps (id, topic, team_id, apns_key_id, apns_key_path, server_identity_path, created_at, updated_at) "
                + "VALUES ('alpha', 'com.example.alpha', 'TEAM123456', 'KEY1234567', '/etc/sealed-push/alpha.p8', "
                + "'/etc/sealed-push/alpha.spsk', 0, 0)")
        let keys = try await StoreFixtures.register(["a", "b", "c"], in: "alpha", store)
        let fixtures = try StoreFixtures()
        var old = try fixtures.notification(appID: "alpha", to: keys)
        for index in old.jobs.indices { old.jobs[index].messageID = nil; old.jobs[index].keyID = nil }  // v6 has no columns
        // Jobs written by version 6's INSERT (no message or key ids).
        try await harness.execute("INSERT INTO notifications (id, app_id, priority, created_at, expires_at) VALUES ('\(old.id.uuidString.lowercased())', 'alpha', 10, 0, 9999999999999)")
        for (index, job) in old.jobs.enumerated() {
            try await harness.execute(
                "INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before, updated_at) VALUES ('\(old.id.uuidString.lowercased())', 'alpha', '\(job.deviceID)', x'\(Hex.encode(job.body.bytes))', '\(index == 0 ? "sent" : "queued")', 0, 0)")
        }
        try await harness.execute("DELETE FROM jobs WHERE device_id = 'c'")  // the highest id is gone: never reused
        let latest = try #require(SQLiteMigrations.all.last?.version)
        #expect(try await store.migrate() == latest - 6)  // 7, then every later one
        #expect(try await store.schemaVersion() == latest)
        #expect(try await store.app(id: "alpha") == StoreFixtures.app("alpha"))

        let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: old.id))
        #expect(status.deliveries.map(\.deviceID) == ["a", "b"])
        #expect(status.deliveries.map(\.state) == [.sent, .queued])
        let claimed = try await store.claim(owner: "w", limit: 5, leaseDuration: .seconds(60), now: StoreFixtures.now)
        #expect(claimed.map(\.id) == [2])
        let fresh = try fixtures.notification(appID: "alpha", to: keys)
        _ = try await store.enqueue(fresh)
        let all = try await store.claim(owner: "w", limit: 5, leaseDuration: .seconds(60), now: StoreFixtures.now)
        #expect(all.map(\.id).sorted() == [4, 5, 6])
        // The rebuilt table takes the new state.
        #expect(try await store.withdraw(appID: "alpha", notificationID: fresh.id, now: StoreFixtures.now)?.withdrawnNow == 3)
        try await store.close()
        try await harness.tearDown()
    }

    /// Migration 12 rebuilds `job_messages` keyed by the job's row id and keeps `jobs_device` for open jobs only:
    /// every job's message and key id survive, and a device's open jobs still end when it is unregistered.
    @Test func migration12KeepsMessageIDs() async throws {
        let harness = try SQLiteHarness()
        let store = try SQLiteGatewayStore(path: harness.path)
        #expect(try await store.migrate(upTo: 11) == 11)
        try await store.putApp(StoreFixtures.app("alpha"), now: StoreFixtures.now)
        let keys = try await StoreFixtures.register(["a", "b", "c"], in: "alpha", store)
        let fixtures = try StoreFixtures()
        let first = try fixtures.notification(appID: "alpha", to: keys)
        let second = try fixtures.notification(appID: "alpha", to: keys)
        _ = try await store.enqueue(first)
        _ = try await store.enqueue(second)
        let messages: @Sendable (GRDB.Database) throws -> [[String]] = { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT job_id, message_id, key_id FROM job_messages ORDER BY job_id").map {
                ["\($0[0] as Int64)", $0[1], $0[2]]
            }
        }
        let before = try await store.read("job messages", messages)
        #expect(before.count == 6)
        #expect(try await store.migrate() == (SQLiteMigrations.all.last?.version ?? 0) - 11)
        #expect(try await store.read("job messages", messages) == before)

        #expect(try await store.markDeviceUnregistered(appID: "alpha", deviceID: "b", reason: "Unregistered", at: StoreFixtures.now))
        for notification in [first, second] {
            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: notification.id))
            #expect(status.deliveries.map(\.state) == [.queued, .unregistered, .queued])
        }
        try await store.close()
        try await harness.tearDown()
    }
}
