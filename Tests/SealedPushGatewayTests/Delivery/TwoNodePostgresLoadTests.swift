import Foundation
import MetricsTestKit
import SealedPushGateway
import Testing

/// Two gateway nodes — two `DeliveryService`s with their own node ids, each on its own `PostgresGatewayStore` (its
/// own connection pool) — on one PostgreSQL database and one APNs emulator, with 20,000 jobs: every job ends `sent`,
/// the emulator accepted each `apns-id` exactly once, and both nodes did part of the work. There are no faults here,
/// so the bar for duplicates is 0.
///
/// It takes a minute or two in a debug build on two cores, so `scripts/test` runs it on its own line.
@Suite(
    "Two nodes on PostgreSQL, 20,000 jobs", .serialized,
    .enabled(
        if: PostgresHarness.serverURL != nil,
        "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
struct TwoNodePostgresLoadTests {
    static let devices = 100
    static let notifications = 200

    @Test func twentyThousandJobsEachDeliveredOnce() async throws {
        try await withDeliveryFixture(try await PostgresHarness(), { $0.trackedAPNsIDs = 100_000 }) { fixture in
            let clock = ContinuousClock()
            let devices = try await fixture.registerDevices(Self.devices)
            let enqueueStart = clock.now
            var notifications: [NewNotification] = []
            for index in 0..<Self.notifications {
                // A third have the backend's collapse id, the rest the derived one.
                notifications.append(
                    try await fixture.enqueue(to: devices, collapseID: index % 3 == 0 ? "load-\(index)" : nil).notification)
            }
            let enqueueTime = enqueueStart.duration(to: clock.now)
            let total = Self.notifications * Self.devices
            #expect(try await fixture.store.queueDepth().queued == total)

            let secondStore = try await fixture.harness.makeStore()
            let metrics = [TestMetrics(), TestMetrics()]
            var services: [DeliveryService] = []
            for (index, store) in [fixture.store, secondStore].enumerated() {
                var configuration = fixture.configuration(nodeID: "node-\(index)")
                configuration.maxConcurrentSends = 32
                services.append(
                    try DeliveryService(
                        store: store, configuration: configuration, logger: DeliveryFixture.quietLogger("node-\(index)"),
                        metricsFactory: metrics[index]))
            }
            let store = fixture.store
            let deliveryStart = clock.now
            let emptied = try await runServices(services, timeout: .seconds(300)) { try await store.queueIsEmpty() }
            let deliveryTime = deliveryStart.duration(to: clock.now)
            try await secondStore.close()
            #expect(emptied, "the queue did not empty within 300 s")

            // Every job ended sent, once, with the apns-id derived from it.
            var expectedIDs: Set<String> = []
            for notification in notifications {
                let deliveries = try await fixture.deliveries(notification.id)
                #expect(deliveries.count == Self.devices)
                for job in notification.jobs {
                    let delivery = try #require(deliveries[job.deviceID])
                    #expect(delivery.state == .sent, "\(job.deviceID): \(delivery.state) \(delivery.reason ?? "")")
                    #expect(delivery.attempts == 1)
                    let derived = DeliveryIdentifiers.apnsID(notificationID: notification.id, deviceID: job.deviceID)
                    #expect(delivery.apnsID == derived.uuidString.lowercased())
                    expectedIDs.insert(derived.uuidString.lowercased())
                }
            }
            #expect(expectedIDs.count == total)

            // The emulator's side: each apns-id accepted exactly once, nothing else.
            let recorder = fixture.emulator.recorder
            let accepted = recorder.acceptedCounts
            #expect(recorder.totalRequests == total)
            #expect(recorder.totalAccepted == total)
            #expect(recorder.duplicateAcceptances == 0)
            #expect(Set(accepted.keys) == expectedIDs)
            #expect(accepted.values.allSatisfy { $0 == 1 })

            // Both nodes worked; together they finished every job once.
            let sent = metrics.map { $0.counterTotal(label: "sealedpush_gateway_sent_total") }
            #expect(sent[0] + sent[1] == Int64(total))
            #expect(sent.allSatisfy { $0 >= Int64(total / 10) }, "one node did (almost) all the work: \(sent)")
            print(
                "two nodes on PostgreSQL: \(total) jobs enqueued in \(enqueueTime), delivered in \(deliveryTime) "
                    + "(\(Int(Double(total) / DeliveryDecisionSeconds.of(deliveryTime)))/s; node-0 \(sent[0]), node-1 \(sent[1]))")
        }
    }
}
