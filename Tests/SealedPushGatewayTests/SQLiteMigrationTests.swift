import Foundation
import SealedPushCore
@testable import SealedPushGateway
import Testing

/// Migration 7 rebuilds the SQLite jobs table (its CHECK constraint cannot be altered): a database with jobs at
/// version 6 keeps every job, its id and state, and the id sequence.
@Suite("SQLite migration 7")
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
}
