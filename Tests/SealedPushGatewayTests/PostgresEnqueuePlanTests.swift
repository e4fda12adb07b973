import Foundation
import Testing

@testable import SealedPushGateway

/// How PostgreSQL finds the devices an enqueue names: each by its primary key, whatever the planner's statistics say
/// about the app's `devices` table — never by reading the whole table.
///
/// Read from `EXPLAIN (ANALYZE, BUFFERS)` of the statement on one of the store's sessions, on the generic plan every
/// session settles on after its first executions. Written as a join, the statement was planned as a sequential scan
/// of `devices` and a hash join whenever the table was small enough for the scan to look cheaper than the lookups:
/// 1,000 devices read and hashed for every enqueue (0.1 ms of the server's time each, `scripts/gateway-load.sh
/// postgres`), and more as the app grew until autovacuum's next look.
@Suite(
    "PostgreSQL enqueue plan",
    .serialized,
    .enabled(
        if: PostgresHarness.serverURL != nil,
        "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
struct PostgresEnqueuePlanTests {
    @Test func devicesAreReadByTheirKey() async throws {
        let harness = try await PostgresHarness()
        try await withMigratedStore(harness) { migrated, _ in
            // An app with 1,000 devices and fresh statistics: a table a sequential scan reads in a few dozen pages.
            try await harness.execute(
                """
                INSERT INTO devices (app_id, device_id, push_token, environment, public_key, key_id, key_created_at,
                                     registered_at)
                SELECT 'alpha', 'device-' || g, lpad(to_hex(g), 64, '0'), 'sandbox', 'SPD1:unused', 'key-' || g, 0, 0
                FROM generate_series(1, 1000) g
                """)
            try await harness.execute("ANALYZE devices")
            let asked = [7, 93, 150, 151, 402, 517, 640, 777, 800, 812, 901, 933, 950, 987, 999, 1_000].map {
                "device-\($0)"
            }
            let store = try #require(migrated as? PostgresGatewayStore)
            let plan = try await store.explainEnqueueDevices(appID: "alpha", devices: asked + ["device-7", "unknown"])
            #expect(!plan.contains("Seq Scan on devices"), "the lookup read the whole table:\n\(plan)")
            #expect(plan.contains("Index Scan using devices_pkey on devices"), "no lookup by key:\n\(plan)")
            // Every registered device asked for, once (device-7 twice in the arrays), and no row for the unknown one.
            let rows = plan.split(separator: "\n").first.flatMap(Self.actualRows)
            #expect(rows == asked.count, "the lookup answered \(rows.map(String.init) ?? "?") rows:\n\(plan)")
        }
    }

    /// `N` from the first line's `(actual time=… rows=N loops=…)`: the rows the whole statement returned.
    private static func actualRows(_ line: Substring) -> Int? {
        guard let actual = line.range(of: "(actual time=") else { return nil }
        guard let range = line[actual.upperBound...].range(of: "rows=") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }
}
