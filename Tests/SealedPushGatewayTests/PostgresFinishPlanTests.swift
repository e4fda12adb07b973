import Foundation
import Testing

@testable import SealedPushGateway

/// How PostgreSQL finds the jobs a batch of job ends names: each by its primary key, whatever its statistics say
/// about how many jobs are claimed — never by walking the claimed jobs.
///
/// Read from `EXPLAIN (ANALYZE, BUFFERS)` of the statement on one of the store's sessions, on the generic plan every
/// session settles on after its first executions. With `state = 'claimed'` in its condition, the statement was
/// planned as a walk of every `claimed` entry of `jobs_app_due` (live and dead) hashed against the ids when the
/// statistics were taken with few jobs claimed: in `scripts/gateway-load.sh postgres` runs whose statistics were
/// stale, 0.47 ms a job end call instead of 0.14.
@Suite(
    "PostgreSQL job end plan",
    .serialized,
    .enabled(
        if: PostgresHarness.serverURL != nil,
        "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
struct PostgresFinishPlanTests {
    @Test func jobsAreFoundByTheirKey() async throws {
        try await Self.withNotification { harness, store, now in
            // 10,000 jobs sent, then statistics taken while 12 more were claimed…
            try await harness.execute(
                """
                INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before, updated_at,
                                  lease_owner, lease_expires_at)
                SELECT '00000000-0000-0000-0000-000000000001', 'alpha', 'device-' || g, '\\x00'::bytea,
                       CASE WHEN g <= 10000 THEN 'sent' ELSE 'claimed' END, \(now), \(now),
                       CASE WHEN g <= 10000 THEN NULL ELSE 'node-1' END,
                       CASE WHEN g <= 10000 THEN NULL ELSE \(now + 60_000) END
                FROM generate_series(1, 10012) g
                """)
            try await harness.execute("ANALYZE jobs")
            // …and now 128 in flight, as one node with its default delivery slots keeps them.
            try await harness.execute(
                """
                INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before, updated_at,
                                  lease_owner, lease_expires_at)
                SELECT '00000000-0000-0000-0000-000000000001', 'alpha', 'device-' || g, '\\x00'::bytea, 'claimed',
                       \(now), \(now), 'node-1', \(now + 60_000)
                FROM generate_series(10013, 10128) g
                """)
            let ends = Array(Int64(10_050)..<10_062)  // a new database: ids from 1, in the order inserted
            let plan = try await store.explainFinish(jobIDs: ends, owner: "node-1")
            #expect(!plan.contains("jobs_app_due"), "the job ends walked the claimed jobs:\n\(plan)")
            #expect(plan.contains("Index Scan using jobs_pkey on jobs"), "no lookup by key:\n\(plan)")
            // The 12 jobs, each ended once (the transaction is rolled back).
            #expect(plan.split(separator: "\n").first?.contains("rows=12 loops=1") == true, "12 ended:\n\(plan)")
        }
    }

    /// What lets a job end find its job by id and lease owner alone: the schema refuses a lease on a job that is not
    /// claimed (migration 14).
    @Test func aLeaseIsHeldOnlyByAClaimedJob() async throws {
        try await Self.withNotification { harness, _, now in
            let job = { (device: String, state: String, owner: String) in
                """
                INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before, updated_at,
                                  lease_owner, lease_expires_at)
                VALUES ('00000000-0000-0000-0000-000000000001', 'alpha', '\(device)', '\\x00'::bytea, '\(state)',
                        \(now), \(now), \(owner), \(now + 60_000))
                """
            }
            try await harness.execute(job("device-1", "claimed", "'node-1'"))
            try await harness.execute(job("device-2", "queued", "NULL"))
            for state in ["queued", "sent", "failed", "expired", "unregistered", "withdrawn"] {
                await #expect(throws: (any Error).self, "a \(state) job took a lease") {
                    try await harness.execute(job("device-\(state)", state, "'node-1'"))
                }
                try await harness.execute(job("device-\(state)", state, "NULL"))  // the same job without one
            }
        }
    }
    /// On a migrated store of a new database: notification `00000000-0000-0000-0000-000000000001` of app `alpha`,
    /// accepted at `StoreFixtures.now` (`now`, in milliseconds).
    private static func withNotification(
        _ body: (PostgresHarness, PostgresGatewayStore, Int64) async throws -> Void
    ) async throws {
        let harness = try await PostgresHarness()
        try await withMigratedStore(harness) { migrated, _ in
            let store = try #require(migrated as? PostgresGatewayStore)
            let now = Millis.from(StoreFixtures.now)
            try await harness.execute(
                """
                INSERT INTO notifications (id, app_id, priority, created_at, expires_at)
                VALUES ('00000000-0000-0000-0000-000000000001', 'alpha', 10, \(now), \(now + 3_600_000))
                """)
            try await body(harness, store, now)
        }
    }
}
