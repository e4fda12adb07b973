import Foundation
import MetricsTestKit
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushGateway
import Testing

/// Delivery tests for issue 17, run on every store (DeliverySQLiteTests, DeliveryPostgresTests): a restarted node
/// takes back its dead incarnation's leases at once; a live process's node id is refused; every APNs request and
/// its transient reason reaches the job's status and the metrics.
enum NodeAndRetryDeliveryContract {
    /// A process of this machine that has exited (its pid names no running process).
    static func exitedProcessID() throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return Int(process.processIdentifier)
    }

    /// A node restarted after its process died (`kill -9`: no clean stop, a fresh heartbeat left behind) takes back
    /// the jobs its dead incarnation had claimed and sends them at once, not after their 90 s leases.
    static func restartTakesBackDeadIncarnationsLeases(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let devices = try await fixture.registerDevices(6)
            let (notification, _) = try await fixture.enqueue(to: devices)
            let here = NodeInstance.current(nodeID: "node-a", now: Date())
            let dead = NodeInstance(
                nodeID: "node-a", bootID: "dead-boot", host: here.host, machineBootID: here.machineBootID,
                pid: try exitedProcessID(), processStart: 1, startedAt: Date(), heartbeatAt: Date())
            #expect(dead.isProvablyGone)
            #expect(!here.isProvablyGone)
            #expect(try await fixture.store.takeOverNode(dead, replacing: nil, now: Date()) == 0)
            let claimed = try await fixture.store.claim(
                owner: dead.leaseOwner, limit: 100, leaseDuration: .seconds(90), now: Date())
            #expect(claimed.count == devices.count)

            var configuration = fixture.configuration(nodeID: "node-a")
            configuration.leaseDuration = .seconds(90)
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"),
                metricsFactory: TestMetrics())
            let store = fixture.store
            // Well within the 90 s leases the dead process left.
            let emptied = try await runServices([service], timeout: .seconds(20)) { try await store.queueIsEmpty() }
            #expect(emptied, "the dead incarnation's jobs waited for their leases")
            for delivery in try await fixture.deliveries(notification.id).values {
                #expect(delivery.state == .sent)
            }
            #expect(Set(fixture.emulator.recorder.acceptedCounts.keys).count == devices.count)
            // A clean stop deletes the record: the next start need not wait.
            #expect(try await store.node(id: "node-a") == nil)
        }
    }

    /// Two live processes (here, two services) never share a node id: the second start fails naming the first
    /// and when it would count as dead, and the setting an operator can change, `delivery.nodeStaleSeconds` (audit:
    /// it named `delivery.nodeStaleAfter`, which is no setting). Once the first's heartbeat is stale, the id may be
    /// taken over, and the first learns it at its next heartbeat.
    static func liveNodeIDIsRefused(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let quiet = DeliveryFixture.quietLogger("delivery")
            let first = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(nodeID: "twin"), logger: quiet,
                metricsFactory: TestMetrics())
            try await first.start()
            let second = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(nodeID: "twin"), logger: quiet,
                metricsFactory: TestMetrics())
            #expect(first.instance.bootID != second.instance.bootID)
            await #expect {
                try await second.start()
            } throws: { error in
                guard let error = error as? GatewayStoreError, error.code == .nodeInUse else { return false }
                return error.message.contains(first.instance.bootID) && error.message.contains("counts as such in")
                    && error.message.contains("delivery.nodeStaleSeconds") && !error.message.contains("nodeStaleAfter")
            }
            try await DeliveryService(
                store: fixture.store, configuration: fixture.configuration(nodeID: "other"), logger: quiet,
                metricsFactory: TestMetrics()
            ).start()
            // 60 s later without a heartbeat, the first counts as dead.
            var later = fixture.configuration(nodeID: "twin")
            later.now = { Date().addingTimeInterval(60) }
            let successor = try DeliveryService(
                store: fixture.store, configuration: later, logger: quiet, metricsFactory: TestMetrics())
            try await successor.start()
            #expect(try await fixture.store.node(id: "twin")?.bootID == successor.instance.bootID)
            #expect(try await fixture.store.heartbeat(first.instance, now: Date()) == false)
        }
    }

    /// The emulator answers 429, 500 and 503 at random: every request it counted is in the jobs' `attempts` and in
    /// `sealedpush_gateway_provider_requests_total{platform="apns"}`, and every injected fault, by reason, in
    /// `sealedpush_gateway_retries_total{platform="apns",reason}`.
    static func everyAPNsRequestIsCounted(_ harness: any StoreHarness) async throws {
        let faults = EmulatorFaultPlan(
            random: [
                .init(.tooManyRequests, probability: 0.08),
                .init(.internalServerError, probability: 0.08),
                .init(.serviceUnavailable, probability: 0.08),
            ], seed: 2026_11_25)
        try await withDeliveryFixture(harness, { $0.faults = faults }) { fixture in
            let devices = try await fixture.registerDevices(10)
            var notifications: [NewNotification] = []
            for _ in 0..<20 { notifications.append(try await fixture.enqueue(to: devices).notification) }
            let metrics = TestMetrics()
            let service = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(),
                logger: DeliveryFixture.quietLogger("delivery"), metricsFactory: metrics)
            let store = fixture.store
            #expect(try await runServices([service], timeout: .seconds(120)) { try await store.queueIsEmpty() })

            let recorder = fixture.emulator.recorder
            var attempts = 0
            var withTransientReason = 0
            for notification in notifications {
                for delivery in try await fixture.deliveries(notification.id).values {
                    #expect(delivery.state == .sent)
                    attempts += delivery.attempts
                    if delivery.lastTransientReason != nil { withTransientReason += 1 }
                }
            }
            let injected = recorder.faultsInjected
            let faultCount = injected.values.reduce(0, +)
            #expect(faultCount > 0)
            #expect(recorder.totalRequests == notifications.count * devices.count + faultCount)
            #expect(attempts == recorder.totalRequests)
            #expect(metrics.counterTotal(label: "sealedpush_gateway_provider_requests_total", dimensions: [("platform", "apns")]) == Int64(recorder.totalRequests))
            #expect(metrics.counterTotal(label: "sealedpush_gateway_retries_total") == Int64(faultCount))
            for reason in ["TooManyRequests", "InternalServerError", "ServiceUnavailable"] {
                let fault = injected.first { $0.key.hasSuffix(" " + reason) }?.value ?? 0
                #expect(
                    metrics.counterTotal(label: "sealedpush_gateway_retries_total", dimensions: [("platform", "apns"), ("reason", reason)])
                        == Int64(fault), "\(reason)")
            }
            #expect(withTransientReason > 0)
            print(
                "retries visible: \(recorder.totalRequests) requests for \(notifications.count * devices.count) jobs, "
                    + "faults \(injected), sum of attempts \(attempts)")
        }
    }
}
