import Foundation
import SealedPushGateway
import Testing

/// `jobs_app_due` is the index claims walk: `queued` jobs by app and due time, and `claimed` ones. Until SQLite's
/// migration 13 and PostgreSQL's 14 it held every job kept (a million sends kept for their retention: a million
/// entries), and each finish moved the job's entry into the ended states' part of it — on PostgreSQL an entry for every
/// new row version. It now keeps only open jobs: once every send is finished it holds nothing.
enum DueIndexContract {
    /// One-device sends as the gateway makes them under load (enqueued `claimed` under the node's lease), all finished
    /// `sent`. `expectEntries(store, n)` checks that `jobs_app_due` holds `n` entries (each store counts them its own
    /// way) and throws or records an issue when it does not.
    static func finishedJobsLeaveTheDueIndex(
        _ harness: any StoreHarness, sends: Int = 64,
        expectEntries: @escaping (any GatewayStore, Int) async throws -> Void
    ) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let devices = (1...16).map { "device-\($0)" }
            let keys = try await StoreFixtures.register(devices, in: "alpha", store)
            let lease = JobLease(owner: "node/boot", expiresAt: StoreFixtures.now.addingTimeInterval(90))
            let batch = try (0..<sends).map { index in
                let deviceID = devices[index % devices.count]
                var notification = try fixtures.notification(appID: "alpha", to: [deviceID: keys[deviceID]!])
                notification.lease = lease
                return notification
            }
            let claimed = try await store.enqueueBatch(batch).flatMap { try $0.get().claimed }
            #expect(claimed.count == sends, "every send handed over")
            try await expectEntries(store, sends)  // the open jobs are in it (and the count works)

            let ends = claimed.map {
                JobFinish(
                    jobID: $0.id, owner: lease.owner, outcome: .sent(apnsID: "id-\($0.id)"), requests: 1,
                    transientReason: nil, now: StoreFixtures.now)
            }
            #expect(try await store.finish(ends) == Array(repeating: true, count: sends))
            try await expectEntries(store, 0)
            // The queue still works through it: a new send is claimed from it.
            _ = try await store.enqueue(try fixtures.notification(appID: "alpha", to: ["device-1": keys["device-1"]!]))
            let next = try await store.claim(
                owner: "node/boot", limit: 16, leaseDuration: .seconds(60), now: StoreFixtures.now)
            #expect(next.count == 1)
        }
    }
}
