import Foundation
import Testing

@testable import SealedPushGateway

/// What a claim costs PostgreSQL when the queue has grown faster than the planner's statistics (a fan-out to every
/// device right after they registered): it must read the few jobs it takes, not the queue.
///
/// The figure is the claim's own count of buffers from `EXPLAIN (ANALYZE, BUFFERS)` on one of the store's sessions —
/// pages touched, not time, so it does not depend on the machine. In `scripts/gateway-bench.sh` such claims started
/// from `devices`, read and sorted every queued job (17,000 buffers, 12 ms a claim), or, with JIT on, were compiled
/// with LLVM each time (300-550 ms a claim).
@Suite(
    "PostgreSQL claim plan",
    .serialized,
    .enabled(
        if: PostgresHarness.serverURL != nil,
        "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
struct PostgresClaimPlanTests {
    @Test func claimWithStaleStatisticsReadsWhatItTakes() async throws {
        let harness = try await PostgresHarness()
        try await withMigratedStore(harness) { _, _ in
            let now = Millis.from(StoreFixtures.now)
            for table in ["devices", "notifications", "jobs"] {
                try await harness.execute("ALTER TABLE \(table) SET (autovacuum_enabled = false)")
            }
            // Statistics taken while the app had one device and one job (autovacuum's next look still to come, and
            // the store's own ANALYZE not yet run: it follows a burst in the background)…
            try await harness.execute(Self.devices(1...1))
            try await harness.execute(Self.notifications(1...1, now: now))
            try await harness.execute(Self.jobs(notifications: 1...1, devices: 1...1, now: now))
            try await harness.execute("ANALYZE")
            // …then 1,000 devices registered and ten sends reached each: 10,000 queued jobs.
            try await harness.execute(Self.devices(2...1_000))
            try await harness.execute(Self.notifications(2...11, now: now))
            try await harness.execute(Self.jobs(notifications: 2...11, devices: 1...1_000, now: now))

            // And a server whose JIT threshold this claim passes (its cost estimate grows with the queue; here the
            // threshold comes down to it, for sessions opened from now on).
            try await harness.execute(
                "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET jit_above_cost = 0', current_database()); END $$")
            let fresh = try PostgresGatewayStore(url: harness.url)
            let plan: String
            do {
                plan = try await fresh.explainClaim(limit: 16, now: StoreFixtures.now)
            } catch {
                try? await fresh.close()
                throw error
            }
            try await fresh.close()
            let buffers = plan.split(separator: "\n").lazy.compactMap { Self.sharedHits(String($0)) }.first ?? Int.max
            #expect(buffers < Self.bound, "a claim of 16 read \(buffers) buffers:\n\(plan)")
            #expect(plan.hasPrefix("Update on jobs") && plan.contains("rows=16 loops=1"), "16 claimed:\n\(plan)")
            #expect(!plan.contains("JIT:"), "PostgreSQL compiled the claim with LLVM:\n\(plan)")
        }
    }

    /// The most buffers a claim of 16 may read: measured 500-700 with fresh statistics; 1,500-3,900 when each
    /// claimed job's device lookup walks the app's devices.
    static let bound = 1_000

    /// `N` from the first `Buffers: shared hit=N` line (the whole statement's count).
    private static func sharedHits(_ line: String) -> Int? {
        guard let range = line.range(of: "Buffers: shared hit=") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    private static func devices(_ numbers: ClosedRange<Int>) -> String {
        """
        INSERT INTO devices (app_id, device_id, push_token, environment, public_key, key_id, key_created_at,
                             registered_at)
        SELECT 'alpha', 'device-' || g, lpad(to_hex(g), 64, '0'), 'sandbox', 'SPD1:unused', 'key-' || g, 0, 0
        FROM generate_series(\(numbers.lowerBound), \(numbers.upperBound)) g
        """
    }

    private static func notifications(_ numbers: ClosedRange<Int>, now: Int64) -> String {
        """
        INSERT INTO notifications (id, app_id, priority, created_at, expires_at)
        SELECT ('00000000-0000-0000-0000-' || lpad(g::text, 12, '0'))::uuid, 'alpha', 10, \(now), \(now + 3_600_000)
        FROM generate_series(\(numbers.lowerBound), \(numbers.upperBound)) g
        """
    }

    private static func jobs(notifications: ClosedRange<Int>, devices: ClosedRange<Int>, now: Int64) -> String {
        """
        INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before, updated_at)
        SELECT ('00000000-0000-0000-0000-' || lpad(n::text, 12, '0'))::uuid, 'alpha', 'device-' || g, '\\x00'::bytea,
               'queued', \(now - 1_000), \(now)
        FROM generate_series(\(notifications.lowerBound), \(notifications.upperBound)) n,
             generate_series(\(devices.lowerBound), \(devices.upperBound)) g
        """
    }
}
