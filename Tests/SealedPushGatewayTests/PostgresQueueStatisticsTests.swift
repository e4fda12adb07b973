import Foundation
import Testing

@testable import SealedPushGateway

/// What starts the PostgreSQL store's own `ANALYZE` of the queue (``PostgresStatistics``): jobs that join the queue a
/// claim walks — enqueued without a lease, or given back for a retry — not jobs handed over at enqueue and ended.
@Suite(
    "PostgreSQL queue statistics",
    .serialized,
    .enabled(
        if: PostgresHarness.serverURL != nil,
        "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
struct PostgresQueueStatisticsTests {
    /// 25 sends to 50 devices each: 1,250 jobs, past the 1,000 that start an analyze.
    private static let devices = (1...50).map { "device-\($0)" }
    private static let sends = 25

    @Test func handedOverJobsStartNoAnalyze() async throws {
        let harness = try await PostgresHarness()
        try await withMigratedStore(harness) { _, fixtures in
            let store = try PostgresGatewayStore(url: harness.url)
            do {
                let keys = try await StoreFixtures.register(Self.devices, in: "alpha", store)
                let lease = JobLease(owner: "node-1", expiresAt: StoreFixtures.now.addingTimeInterval(60))
                var claimed: [ClaimedJob] = []
                for _ in 0..<Self.sends {
                    var notification = try fixtures.notification(appID: "alpha", to: keys)
                    notification.lease = lease
                    for result in try await store.enqueueBatch([notification]) { claimed += try result.get().claimed }
                }
                #expect(claimed.count == Self.sends * Self.devices.count)
                let ends = claimed.map {
                    JobFinish(
                        jobID: $0.id, owner: lease.owner, outcome: .sent(apnsID: UUID().lowercasedString), requests: 1,
                        transientReason: nil, now: StoreFixtures.now)
                }
                #expect(try await store.finish(ends).allSatisfy { $0 })
                #expect(store.statistics.loopsStarted == 0, "1,250 jobs handed over and sent started an analyze")

                // The same sends without a lease wait in the queue: an analyze starts.
                for _ in 0..<Self.sends {
                    _ = try await store.enqueueBatch([try fixtures.notification(appID: "alpha", to: keys)])
                }
                #expect(store.statistics.loopsStarted == 1)
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
        }
    }

    @Test func jobsGivenBackForARetryCount() async throws {
        let harness = try await PostgresHarness()
        try await withMigratedStore(harness) { _, fixtures in
            let store = try PostgresGatewayStore(url: harness.url)
            do {
                let keys = try await StoreFixtures.register(Self.devices, in: "alpha", store)
                let lease = JobLease(owner: "node-1", expiresAt: StoreFixtures.now.addingTimeInterval(60))
                var claimed: [ClaimedJob] = []
                for _ in 0..<Self.sends {
                    var notification = try fixtures.notification(appID: "alpha", to: keys)
                    notification.lease = lease
                    for result in try await store.enqueueBatch([notification]) { claimed += try result.get().claimed }
                }
                let retries = claimed.map {
                    JobFinish(
                        jobID: $0.id, owner: lease.owner,
                        outcome: .retry(reason: "TooManyRequests", notBefore: StoreFixtures.now.addingTimeInterval(5)),
                        requests: 1, transientReason: "429", now: StoreFixtures.now)
                }
                #expect(try await store.finish(retries).allSatisfy { $0 })
                #expect(store.statistics.loopsStarted == 1, "1,250 jobs back in the queue started no analyze")
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
        }
    }
}
