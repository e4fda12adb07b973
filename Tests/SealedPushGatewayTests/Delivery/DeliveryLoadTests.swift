import Foundation
import SealedPushAPNs
import SealedPushGateway
import SealedPushServer
import Testing

/// Throughput of the delivery workers next to the bare `APNsClient` on the same emulator in the same run (the
/// ceiling). A measurement, not a check of speed: it runs only when `SEALEDPUSH_DELIVERY_LOAD` is set (the number
/// of jobs, e.g. 5000) and prints the figures; it asserts only that everything was delivered once.
@Suite(
    "Delivery load", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["SEALEDPUSH_DELIVERY_LOAD"] != nil,
        "set SEALEDPUSH_DELIVERY_LOAD=<jobs> to measure delivery throughput"))
struct DeliveryLoadTests {
    static var jobs: Int { Int(ProcessInfo.processInfo.environment["SEALEDPUSH_DELIVERY_LOAD"] ?? "") ?? 5_000 }

    @Test func sqliteOneNode() async throws { try await Self.measure(SQLiteHarness(), nodes: 1) }
    @Test func sqliteTwoNodes() async throws { try await Self.measure(SQLiteHarness(), nodes: 2) }
    @Test(.enabled(if: PostgresHarness.serverURL != nil)) func postgresOneNode() async throws {
        try await Self.measure(PostgresHarness(), nodes: 1)
    }
    @Test(.enabled(if: PostgresHarness.serverURL != nil)) func postgresTwoNodes() async throws {
        try await Self.measure(PostgresHarness(), nodes: 2)
    }

    static func measure(_ harness: any StoreHarness, nodes: Int) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let deviceCount = 100
            let devices = try await fixture.registerDevices(deviceCount)
            let notificationCount = max(1, jobs / deviceCount)
            let total = notificationCount * deviceCount
            let clock = ContinuousClock()
            let enqueueStart = clock.now
            var bodies: [[UInt8]] = []
            for _ in 0..<notificationCount {
                let (notification, _) = try await fixture.enqueue(to: devices)
                if bodies.count < deviceCount { bodies += notification.jobs.map(\.body.bytes) }
            }
            let enqueueTime = enqueueStart.duration(to: clock.now)

            // The ceiling: the bare client, same emulator, same concurrency, same bodies.
            let configuration = fixture.configuration()
            let key = try APNsSigningKey(contentsOfFile: fixture.keyPath)
            let client = try APNsClient(
                configuration: configuration.client,
                tokenIssuer: try ProviderTokenIssuer(key: key, keyID: DeliveryFixture.keyID, teamID: DeliveryFixture.teamID),
                logger: DeliveryFixture.quietLogger("bare"))
            let bare = (0..<total).map { index in
                APNsNotification(
                    deviceToken: try! DeviceToken(hex: DeliveryFixture.token(index % deviceCount)),
                    topic: DeliveryFixture.topic, payload: bodies[index % bodies.count])
            }
            let bareStart = clock.now
            let summary = await client.send(bare, maxConcurrent: 64)
            let bareTime = bareStart.duration(to: clock.now)
            await client.shutdown()
            #expect(summary.delivered == total)

            var stores: [any GatewayStore] = [fixture.store]
            for _ in 1..<max(nodes, 1) { stores.append(try await fixture.harness.makeStore()) }
            let services = try stores.enumerated().map { index, store in
                var nodeConfiguration = fixture.configuration(nodeID: "node-\(index)")
                nodeConfiguration.maxConcurrentSends = 64
                return try DeliveryService(
                    store: store, configuration: nodeConfiguration, logger: DeliveryFixture.quietLogger("node"))
            }
            let store = fixture.store
            let gatewayStart = clock.now
            let emptied = try await runServices(services, timeout: .seconds(600)) { try await store.queueIsEmpty() }
            let gatewayTime = gatewayStart.duration(to: clock.now)
            for extra in stores.dropFirst() { try await extra.close() }
            #expect(emptied)
            #expect(fixture.emulator.recorder.totalAccepted == 2 * total)
            #expect(fixture.emulator.recorder.duplicateAcceptances == 0)

            func rate(_ duration: Duration) -> Int { Int(Double(total) / DeliveryDecisionSeconds.of(duration)) }
            print(
                "delivery load (\(harness is SQLiteHarness ? "SQLite" : "PostgreSQL"), \(nodes) node(s), \(total) jobs, "
                    + "64 in flight per sender): enqueue \(rate(enqueueTime))/s; bare APNsClient \(rate(bareTime))/s; "
                    + "gateway \(rate(gatewayTime))/s = \(String(format: "%.2f", DeliveryDecisionSeconds.of(bareTime) / DeliveryDecisionSeconds.of(gatewayTime))) of the bare client")
        }
    }
}
