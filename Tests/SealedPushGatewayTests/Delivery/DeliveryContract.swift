import Foundation
import MetricsTestKit
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushGateway
import ServiceLifecycle
import SealedPushGatewayTestSupport
import Testing

/// The delivery workers' behaviour, the same on every store (SQLite and PostgreSQL suites call these), always
/// against the real APNs emulator on loopback.
enum DeliveryContract {
    /// N notifications to several devices: each reaches the emulator exactly once, with the body that was
    /// enqueued and the collapse id (the notification's, or one derived from its id); statuses say `sent` with the
    /// apns-id the emulator recorded.
    static func deliversEachJobOnce(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let devices = try await fixture.registerDevices(5)
            var notifications: [NewNotification] = []
            let began = Date()
            for index in 0..<12 {
                // Every other notification has the backend's own collapse id. Each was accepted 20 s ago: the
                // delivery latency counts from then.
                let (notification, _) = try await fixture.enqueue(
                    to: devices, collapseID: index % 2 == 0 ? "backend-\(index)" : nil,
                    createdAt: began.addingTimeInterval(-20))
                notifications.append(notification)
            }
            let metrics = TestMetrics()
            let service = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(),
                logger: DeliveryFixture.quietLogger("delivery"), metricsFactory: metrics)
            let store = fixture.store
            let emptied = try await runServices([service]) { try await store.queueIsEmpty() }
            #expect(emptied)

            let expectedCount = notifications.count * devices.count
            let recorder = fixture.emulator.recorder
            #expect(recorder.totalRequests == expectedCount)
            #expect(recorder.totalAccepted == expectedCount)
            #expect(recorder.duplicateAcceptances == 0)
            #expect(recorder.acceptedCounts.count == expectedCount)

            for notification in notifications {
                let deliveries = try await fixture.deliveries(notification.id)
                for job in notification.jobs {
                    let delivery = try #require(deliveries[job.deviceID])
                    #expect(delivery.state == .sent)
                    #expect(delivery.attempts == 1)
                    let apnsID = try #require(delivery.apnsID)
                    let number = Int(job.deviceID.dropFirst("device-".count))!
                    let received = recorder.notifications(for: DeliveryFixture.token(number)).filter {
                        $0.apnsID == apnsID
                    }
                    #expect(received.count == 1)
                    guard let sent = received.first else { continue }
                    #expect(sent.body == job.body.bytes)
                    #expect(sent.topic == DeliveryFixture.topic)
                    #expect(sent.priority == 10)
                    #expect(sent.expiration == Int64(notification.expiresAt.timeIntervalSince1970))
                    #expect(sent.collapseID == (notification.collapseID ?? "sp-" + notification.id.uuidString.lowercased()))
                }
            }
            #expect(metrics.counterTotal(label: "sealedpush_gateway_sent_total") == Int64(expectedCount))
            #expect(metrics.counters(label: "sealedpush_gateway_failed_total").isEmpty)
            #expect(try metrics.expectTimer("sealedpush_gateway_send_seconds", [("platform", "apns")]).values.count == expectedCount)
            // From each notification's acceptance, 20 s before the test began, to its send: 20 s and at most the
            // test's own time more.
            let latest = 20 + Date().timeIntervalSince(began)
            let latencies = try metrics.expectTimer("sealedpush_gateway_delivery_seconds", [("platform", "apns")])
                .values.map { Double($0) / 1e9 }
            #expect(latencies.count == expectedCount)
            #expect(latencies.allSatisfy { $0 >= 20 && $0 <= latest }, "\(latencies.min() ?? -1)…\(latencies.max() ?? -1) s")
        }
    }

    /// A token APNs answers 410 `Unregistered` for, and one it calls `BadDeviceToken`: both devices are marked
    /// unregistered with their reason, later notifications are not sent to them, the webhook is told (signed).
    static func unregisteredTokensStopSends(_ harness: any StoreHarness) async throws {
        let receiver = try await WebhookReceiver.start(answers: [])
        let gone = Date(timeIntervalSince1970: 1_790_000_000)
        do {
            try await withDeliveryFixture(harness, { emulator in
                emulator.unregisteredDeviceTokens = [DeliveryFixture.token(1): gone]
                // Device 2's token is unknown to APNs: BadDeviceToken.
                emulator.knownDeviceTokens = [DeliveryFixture.token(0), DeliveryFixture.token(1)]
            }) { fixture in
                let devices = try await fixture.registerDevices(3)
                let (first, _) = try await fixture.enqueue(to: devices)
                var configuration = fixture.configuration()
                let secret = Array("a webhook secret of 32 bytes....".utf8)
                configuration.webhook = try UnregisteredWebhookConfiguration(
                    url: URL(string: "http://127.0.0.1:\(receiver.port)/hooks/apns")!, secret: secret)
                let metrics = TestMetrics()
                let service = try DeliveryService(
                    store: fixture.store, configuration: configuration,
                    logger: DeliveryFixture.quietLogger("delivery"), metricsFactory: metrics)
                let store = fixture.store
                try await runServices([service]) {
                    try await store.queueIsEmpty() && receiver.requests.count >= 2
                }
                let deliveries = try await fixture.deliveries(first.id)
                #expect(deliveries["device-0"]?.state == .sent)
                #expect(deliveries["device-1"]?.state == .unregistered)
                #expect(deliveries["device-1"]?.reason == "Unregistered")
                #expect(deliveries["device-2"]?.state == .unregistered)
                #expect(deliveries["device-2"]?.reason == "BadDeviceToken")
                for id in ["device-1", "device-2"] {
                    let device = try await store.device(appID: DeliveryFixture.appID, deviceID: id)
                    #expect(device?.unregisteredAt != nil, "\(id) is not marked unregistered")
                }
                #expect(try await store.device(appID: DeliveryFixture.appID, deviceID: "device-0")?.unregisteredAt == nil)
                #expect(metrics.counterTotal(label: "sealedpush_gateway_failed_total", dimensions: [("platform", "apns"), ("reason", "Unregistered")]) == 1)
                #expect(metrics.counterTotal(label: "sealedpush_gateway_failed_total", dimensions: [("reason", "BadDeviceToken")]) == 1)

                // The webhook: one signed event per device, ids and reason only.
                let requests = receiver.requests
                #expect(requests.count == 2)
                var seen: [String: String] = [:]
                for request in requests {
                    #expect(request.method == "POST")
                    #expect(request.path == "/hooks/apns")
                    #expect(request.header("SealedPush-Event") == "device.unregistered")
                    let timestamp = try #require(request.header("SealedPush-Timestamp"))
                    #expect(abs(Double(timestamp)! - Date().timeIntervalSince1970) < 120)
                    let mac = try HMACCheck.sha256(key: secret, message: Array((timestamp + ".").utf8) + request.body)
                    #expect(request.header("SealedPush-Signature") == "v1=" + hex(mac))
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
                    #expect(Set(object.keys) == ["type", "appId", "deviceId", "reason", "unregisteredAt"])
                    #expect(object["appId"] as? String == DeliveryFixture.appID)
                    if let device = object["deviceId"] as? String { seen[device] = object["reason"] as? String }
                    // No token in the event.
                    let text = String(decoding: request.body, as: UTF8.self)
                    #expect(!text.contains(DeliveryFixture.token(1)) && !text.contains(DeliveryFixture.token(2)))
                }
                #expect(seen == ["device-1": "Unregistered", "device-2": "BadDeviceToken"])
                // The 410's timestamp is the time reported for device-1.
                let event1 = requests.first { String(decoding: $0.body, as: UTF8.self).contains("device-1") }
                #expect(event1.map { String(decoding: $0.body, as: UTF8.self).contains("\"2026-09-21T14:13:20Z\"") } == true)

                // A second notification goes to device-0 only: one more request in all.
                let requestsBefore = fixture.emulator.recorder.totalRequests
                #expect(requestsBefore == 3)
                let (second, result) = try await fixture.enqueue(to: devices)
                #expect(result.jobCount == 3)
                let again = try DeliveryService(
                    store: fixture.store, configuration: fixture.configuration(),
                    logger: DeliveryFixture.quietLogger("delivery"))
                try await runServices([again]) { try await store.queueIsEmpty() }
                #expect(fixture.emulator.recorder.totalRequests == 4)
                let secondDeliveries = try await fixture.deliveries(second.id)
                #expect(secondDeliveries["device-0"]?.state == .sent)
                #expect(secondDeliveries["device-1"]?.state == .unregistered)
                #expect(secondDeliveries["device-2"]?.state == .unregistered)
            }
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    /// A notification past its ttl is never sent and ends `expired`; a live one next to it is sent.
    static func expiredJobsAreNotSent(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let devices = try await fixture.registerDevices(3)
            let (stale, _) = try await fixture.enqueue(to: devices, createdAt: Date().addingTimeInterval(-60), ttl: 30)
            let (live, _) = try await fixture.enqueue(to: devices)
            let metrics = TestMetrics()
            let service = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(),
                logger: DeliveryFixture.quietLogger("delivery"), metricsFactory: metrics)
            let store = fixture.store
            try await runServices([service]) { try await store.queueIsEmpty() }
            #expect(fixture.emulator.recorder.totalRequests == devices.count)
            for delivery in try await fixture.deliveries(stale.id).values {
                #expect(delivery.state == .expired)
                #expect(delivery.attempts == 0)
            }
            for delivery in try await fixture.deliveries(live.id).values { #expect(delivery.state == .sent) }
            #expect(metrics.counterTotal(label: "sealedpush_gateway_failed_total", dimensions: [("platform", "apns"), ("reason", "Expired")]) == 3)
        }
    }

    /// Retention: a notification that expired longer ago than the retention is purged by the running service
    /// (status gone, no job left), one that expired within it keeps its status, and live work is delivered.
    static func retentionPurgesOldNotifications(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let devices = try await fixture.registerDevices(2)
            let day: TimeInterval = 86_400
            let (ancient, _) = try await fixture.enqueue(to: devices, createdAt: Date().addingTimeInterval(-3 * day), ttl: 60)
            let (recent, _) = try await fixture.enqueue(to: devices, createdAt: Date().addingTimeInterval(-120), ttl: 60)
            let (live, _) = try await fixture.enqueue(to: devices)
            var configuration = fixture.configuration()
            configuration.retention = .seconds(2 * 86_400)
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"))
            let store = fixture.store
            let purged = try await runServices([service], timeout: .seconds(60)) {
                let gone = try await store.notificationStatus(appID: DeliveryFixture.appID, notificationID: ancient.id) == nil
                return try await store.queueIsEmpty() && gone
            }
            #expect(purged)
            #expect(try await fixture.deliveries(recent.id).values.allSatisfy { $0.state == .expired })
            #expect(try await fixture.deliveries(live.id).values.allSatisfy { $0.state == .sent })
            #expect(fixture.emulator.recorder.totalRequests == devices.count)
        }
    }

    /// A node that claimed jobs and died (never finished): nothing is sent while its lease runs; after it, the
    /// service takes the jobs over and delivers each once; the dead node can no longer finish them.
    static func lapsedLeaseIsTakenOver(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let devices = try await fixture.registerDevices(4)
            let (notification, _) = try await fixture.enqueue(to: devices)
            let claimedAt = Date()
            let dead = try await fixture.store.claim(owner: "dead-node", limit: 100, leaseDuration: .seconds(3), now: claimedAt)
            #expect(dead.count == devices.count)
            let service = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(nodeID: "survivor"),
                logger: DeliveryFixture.quietLogger("delivery"))
            let store = fixture.store
            let recorder = fixture.emulator.recorder
            let sentDuringLease = Collector<Int>()
            try await runServices([service]) {
                if Date() < claimedAt.addingTimeInterval(2.5) { sentDuringLease.append(recorder.totalRequests) }
                return try await store.queueIsEmpty()
            }
            #expect(!sentDuringLease.all.isEmpty)
            #expect(sentDuringLease.all.allSatisfy { $0 == 0 }, "sent while the dead node's lease ran")
            #expect(recorder.totalAccepted == devices.count)
            #expect(recorder.acceptedCounts.values.allSatisfy { $0 == 1 })
            for delivery in try await fixture.deliveries(notification.id).values {
                #expect(delivery.state == .sent)
                #expect(delivery.attempts == 2)
            }
            let late = try await fixture.store.finish(jobID: dead[0].id, owner: "dead-node", outcome: .failed(reason: "late"), now: Date())
            #expect(!late)
        }
    }

    /// A node sent its jobs and died before writing the outcome (simulated in SQL: the jobs are left claimed with
    /// an expired lease): the next node sends each again, and every resend is an exact copy — same body bytes,
    /// same `apns-id`, same collapse id (the backend's, or the derived one) — so APNs collapses it.
    static func resendAfterCrashIsIdentical(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let devices = try await fixture.registerDevices(3)
            let (withCollapse, _) = try await fixture.enqueue(to: devices, collapseID: "order-42")
            let (withoutCollapse, _) = try await fixture.enqueue(to: devices)
            let store = fixture.store
            let first = try DeliveryService(
                store: store, configuration: fixture.configuration(nodeID: "crashing"),
                logger: DeliveryFixture.quietLogger("first"))
            try await runServices([first]) { try await store.queueIsEmpty() }
            let recorder = fixture.emulator.recorder
            #expect(recorder.totalAccepted == 6)
            var firstIDs: [String: String] = [:]
            for notification in [withCollapse, withoutCollapse] {
                for (device, delivery) in try await fixture.deliveries(notification.id) {
                    firstIDs["\(notification.id)/\(device)"] = delivery.apnsID
                }
            }
            // The crash: outcomes (and the request counts written with them) never written, leases long gone.
            try await fixture.harness.execute(
                "UPDATE jobs SET state = 'claimed', lease_owner = 'crashing', lease_expires_at = 0, apns_id = NULL, requests = 0")
            let second = try DeliveryService(
                store: store, configuration: fixture.configuration(nodeID: "survivor"),
                logger: DeliveryFixture.quietLogger("second"))
            try await runServices([second]) { try await store.queueIsEmpty() }

            #expect(recorder.totalAccepted == 12)
            #expect(recorder.duplicateAcceptances == 6)
            #expect(recorder.acceptedCounts.count == 6)
            #expect(recorder.acceptedCounts.values.allSatisfy { $0 == 2 })
            for notification in [withCollapse, withoutCollapse] {
                for job in notification.jobs {
                    let delivery = try #require(try await fixture.deliveries(notification.id)[job.deviceID])
                    #expect(delivery.state == .sent)
                    #expect(delivery.attempts == 2)  // the crashed claim's request (counted at the take-over), the resend
                    #expect(delivery.apnsID == firstIDs["\(notification.id)/\(job.deviceID)"])
                    let number = Int(job.deviceID.dropFirst("device-".count))!
                    let copies = recorder.notifications(for: DeliveryFixture.token(number)).filter {
                        $0.apnsID == delivery.apnsID
                    }
                    #expect(copies.count == 2)
                    #expect(copies.allSatisfy { $0.body == job.body.bytes })
                    let collapse = notification.collapseID ?? "sp-" + notification.id.uuidString.lowercased()
                    #expect(copies.allSatisfy { $0.collapseID == collapse })
                }
            }
        }
    }

    /// The emulator injects 429/500/503/GOAWAY/resets on 10 % of requests, and the client makes one attempt per
    /// send (GOAWAY's unprocessed streams aside), so every other fault reaches the job level: every job ends `sent`;
    /// jobs came back for later attempts; duplicates (a reset after the request went out) are counted, and every
    /// copy the emulator accepted of one job carries the same body and collapse id.
    static func faultsLoseNothing(_ harness: any StoreHarness) async throws {
        let faults = EmulatorFaultPlan(
            random: [
                .init(.tooManyRequests, probability: 0.03),
                .init(.internalServerError, probability: 0.02),
                .init(.serviceUnavailable, probability: 0.02),
                .init(.goAway, probability: 0.015),
                .init(.connectionReset, probability: 0.015),
            ], seed: 2026_11_23)
        try await withDeliveryFixture(harness, { $0.faults = faults }) { fixture in
            let devices = try await fixture.registerDevices(20)
            var notifications: [NewNotification] = []
            for index in 0..<40 {
                notifications.append(try await fixture.enqueue(to: devices, collapseID: index % 3 == 0 ? "c\(index)" : nil).notification)
            }
            var configuration = fixture.configuration()
            configuration.client.retry = APNsRetryPolicy(maxAttempts: 1)
            configuration.maxConcurrentSends = 32
            let metrics = TestMetrics()
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"),
                metricsFactory: metrics)
            let store = fixture.store
            let started = ContinuousClock.now
            let emptied = try await runServices([service], timeout: .seconds(180)) { try await store.queueIsEmpty() }
            let elapsed = started.duration(to: .now)
            #expect(emptied)

            let recorder = fixture.emulator.recorder
            let total = notifications.count * devices.count
            var sentIDs: Set<String> = []
            var retried = 0
            for notification in notifications {
                for delivery in try await fixture.deliveries(notification.id).values {
                    #expect(delivery.state == .sent, "\(delivery.deviceID): \(delivery.state) \(delivery.reason ?? "")")
                    if let id = delivery.apnsID { sentIDs.insert(id) }
                    if delivery.attempts > 1 { retried += 1 }
                }
            }
            #expect(sentIDs.count == total)
            let accepted = recorder.acceptedCounts
            #expect(Set(accepted.keys) == sentIDs)
            let duplicates = accepted.values.reduce(0) { $0 + max(0, $1 - 1) }
            #expect(duplicates == recorder.duplicateAcceptances)
            // Every copy of a job the emulator accepted is byte-identical, with one collapse id.
            var bodies: [String: Set<[UInt8]>] = [:]
            var collapseIDs: [String: Set<String>] = [:]
            for number in 0..<devices.count {
                for received in recorder.notifications(for: DeliveryFixture.token(number)) {
                    bodies[received.apnsID, default: []].insert(received.body)
                    collapseIDs[received.apnsID, default: []].insert(received.collapseID ?? "")
                }
            }
            #expect(bodies.count == total)
            #expect(bodies.values.allSatisfy { $0.count == 1 })
            #expect(collapseIDs.values.allSatisfy { $0.count == 1 && !$0.contains("") })
            let injected = recorder.faultsInjected.values.reduce(0, +)
            #expect(injected >= 40)
            // Faults other than GOAWAY came back to the queue and were claimed again.
            let jobRetries = metrics.counterTotal(label: "sealedpush_gateway_retries_total")
            #expect(retried > 0 && jobRetries >= Int64(retried))
            #expect(metrics.counterTotal(label: "sealedpush_gateway_sent_total") == Int64(total))
            print(
                "delivery under 10 % faults: \(total) jobs in \(elapsed), \(recorder.totalRequests) requests, "
                    + "\(injected) faults \(recorder.faultsInjected), \(duplicates) duplicates accepted, "
                    + "\(jobRetries) job retries (\(retried) jobs claimed more than once)")
        }
    }

    /// A refusal APNs never takes back (400 `TopicDisallowed`) fails at once with APNs's reason.
    static func permanentFailureKeepsAPNsReason(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness, { $0.allowedTopics = ["com.example.other"] }) { fixture in
            let devices = try await fixture.registerDevices(2)
            let (notification, _) = try await fixture.enqueue(to: devices)
            let metrics = TestMetrics()
            let service = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(),
                logger: DeliveryFixture.quietLogger("delivery"), metricsFactory: metrics)
            let store = fixture.store
            try await runServices([service]) { try await store.queueIsEmpty() }
            for delivery in try await fixture.deliveries(notification.id).values {
                #expect(delivery.state == .failed)
                #expect(delivery.reason == "TopicDisallowed")
                #expect(delivery.attempts == 1)
            }
            #expect(fixture.emulator.recorder.totalRequests == 2)
            #expect(metrics.counterTotal(label: "sealedpush_gateway_failed_total", dimensions: [("reason", "TopicDisallowed")]) == 2)
        }
    }

    /// A transient failure that never clears (503 on every request) is retried `jobRetry.maxAttempts` times, then
    /// fails with it.
    static func exhaustedRetriesFail(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness, { emulator in
            emulator.faults = EmulatorFaultPlan(random: [.init(.serviceUnavailable, probability: 1)])
        }) { fixture in
            let devices = try await fixture.registerDevices(1)
            let (notification, _) = try await fixture.enqueue(to: devices)
            var configuration = fixture.configuration()
            configuration.client.retry = APNsRetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(2))
            configuration.jobRetry = APNsRetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(20))
            let metrics = TestMetrics()
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"),
                metricsFactory: metrics)
            let store = fixture.store
            try await runServices([service]) { try await store.queueIsEmpty() }
            let delivery = try #require(try await fixture.deliveries(notification.id)["device-0"])
            #expect(delivery.state == .failed)
            #expect(delivery.reason == "ServiceUnavailable")
            // 3 claims × 2 client attempts: the status counts every request, the client's own retries included.
            #expect(fixture.emulator.recorder.totalRequests == 6)
            #expect(delivery.attempts == 6)
            #expect(delivery.lastTransientReason == "ServiceUnavailable")
            #expect(metrics.counterTotal(label: "sealedpush_gateway_provider_requests_total", dimensions: [("platform", "apns")]) == 6)
            #expect(metrics.counterTotal(label: "sealedpush_gateway_retries_total") == 6)
            #expect(
                metrics.counterTotal(
                    label: "sealedpush_gateway_retries_total", dimensions: [("platform", "apns"), ("reason", "ServiceUnavailable")]) == 6)
            #expect(metrics.counterTotal(label: "sealedpush_gateway_requeued_total") == 2)
            #expect(metrics.counterTotal(label: "sealedpush_gateway_failed_total", dimensions: [("reason", "ServiceUnavailable")]) == 1)
        }
    }

    /// Two services (two nodes, each with its own store connection) on one database: every job delivered once,
    /// and both nodes took part.
    static func twoNodesDeliverEachJobOnce(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let devices = try await fixture.registerDevices(20)
            for _ in 0..<50 { try await fixture.enqueue(to: devices) }
            let total = 50 * devices.count
            let secondStore = try await fixture.harness.makeStore()
            let metricsA = TestMetrics()
            let metricsB = TestMetrics()
            let a = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(nodeID: "node-a"),
                logger: DeliveryFixture.quietLogger("a"), metricsFactory: metricsA)
            let b = try DeliveryService(
                store: secondStore, configuration: fixture.configuration(nodeID: "node-b"),
                logger: DeliveryFixture.quietLogger("b"), metricsFactory: metricsB)
            let store = fixture.store
            let started = ContinuousClock.now
            let emptied = try await runServices([a, b]) { try await store.queueIsEmpty() }
            let elapsed = started.duration(to: .now)
            try await secondStore.close()
            #expect(emptied)
            let recorder = fixture.emulator.recorder
            #expect(recorder.totalAccepted == total)
            #expect(recorder.acceptedCounts.count == total)
            #expect(recorder.duplicateAcceptances == 0)
            let sentA = metricsA.counterTotal(label: "sealedpush_gateway_sent_total")
            let sentB = metricsB.counterTotal(label: "sealedpush_gateway_sent_total")
            #expect(sentA + sentB == Int64(total))
            #expect(sentA > 0 && sentB > 0, "one node did all the work: \(sentA) / \(sentB)")
            print("two nodes: \(total) jobs in \(elapsed) (node-a \(sentA), node-b \(sentB))")
        }
    }

    /// Graceful shutdown while every send is slow: claiming stops, the sends in flight finish (sent), the rest
    /// stay queued untouched for another node.
    static func gracefulShutdownFinishesInFlight(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness, { emulator in
            emulator.faults = EmulatorFaultPlan(random: [.init(.slow(milliseconds: 1_500), probability: 1)])
        }) { fixture in
            let devices = try await fixture.registerDevices(12)
            let (notification, _) = try await fixture.enqueue(to: devices)
            var configuration = fixture.configuration()
            configuration.maxConcurrentSends = 3
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"))
            let recorder = fixture.emulator.recorder
            // Shut down as soon as the first sends reach the emulator (they take 1.5 s there).
            try await runServices([service], timeout: .seconds(60)) { recorder.totalRequests >= 3 }
            let deliveries = try await fixture.deliveries(notification.id).values
            let sent = deliveries.filter { $0.state == .sent }
            let queued = deliveries.filter { $0.state == .queued }
            #expect(sent.count == recorder.totalAccepted)
            #expect(sent.count >= 3 && sent.count < devices.count, "sent \(sent.count)")
            #expect(sent.count + queued.count == devices.count)
            #expect(queued.allSatisfy { $0.attempts == 0 })
            #expect(try await fixture.store.queueDepth().claimed == 0)
        }
    }

    /// Graceful shutdown while sends hang past the grace period: the service returns soon after the grace period,
    /// and the jobs it abandoned stay claimed — neither failed nor finished — until their lease ends, when any node
    /// may take them over.
    static func shutdownAbandonsHungSendsToLeaseExpiry(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness, { emulator in
            emulator.faults = EmulatorFaultPlan(random: [.init(.noResponse, probability: 1)])
        }) { fixture in
            let devices = try await fixture.registerDevices(4)
            let (notification, _) = try await fixture.enqueue(to: devices)
            var configuration = fixture.configuration()
            configuration.maxConcurrentSends = 2
            configuration.shutdownGracePeriod = .milliseconds(500)
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"))
            let recorder = fixture.emulator.recorder
            let clock = ContinuousClock()
            var stopRequested = clock.now
            let group = ServiceGroup(services: [service], logger: DeliveryFixture.quietLogger("group"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                while recorder.totalRequests < 2 { try await Task.sleep(for: .milliseconds(20)) }
                stopRequested = clock.now
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            let stopTook = stopRequested.duration(to: clock.now)
            #expect(stopTook < .seconds(5), "shutdown took \(stopTook)")
            let deliveries = try await fixture.deliveries(notification.id).values
            #expect(deliveries.filter { $0.state == .claimed && $0.attempts == 1 }.count == 2)
            #expect(deliveries.filter { $0.state == .queued && $0.attempts == 0 }.count == 2)  // never claimed
            #expect(try await fixture.store.queueDepth().claimed == 2)
            // Within the lease nobody else gets them; after it, they are taken over.
            let now = Date()
            #expect(try await fixture.store.claim(owner: "other", limit: 10, leaseDuration: .seconds(5), now: now).count == 2)
            let afterLease = now.addingTimeInterval(DeliveryDecisionSeconds.of(configuration.leaseDuration) + 1)
            let takenOver = try await fixture.store.claim(owner: "later", limit: 10, leaseDuration: .seconds(5), now: afterLease)
            #expect(takenOver.count == 4)
        }
    }
}

enum DeliveryDecisionSeconds {
    static func of(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A thread-safe list.
final class Collector<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    func append(_ element: Element) { lock.withLock { elements.append(element) } }
    var all: [Element] { lock.withLock { elements } }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
