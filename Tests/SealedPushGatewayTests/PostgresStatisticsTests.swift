import Testing

@testable import SealedPushGateway

/// When the PostgreSQL store runs its own `ANALYZE` of the queue: after 1,000 added jobs, then again (one loop, one
/// analyze at a time) while at least a fifth of what the tables held at the last one keeps being added.
@Suite struct PostgresStatisticsTests {
    @Test func thresholds() {
        let statistics = PostgresStatistics()
        #expect(!statistics.added(999))
        #expect(statistics.added(1))          // 1,000 added: a loop starts
        #expect(!statistics.added(5_000))     // the loop runs: no second one
        #expect(statistics.again())           // 5,000 ≥ max(1,000, 1,000 / 5): analyze again
        // 6,000 rows at the last analyze: the next needs 1,200 more.
        #expect(!statistics.added(1_100))
        #expect(!statistics.again())          // not enough: the loop ends
        #expect(statistics.added(100))        // 1,200 now: a new loop
        #expect(!statistics.again())
    }
}
