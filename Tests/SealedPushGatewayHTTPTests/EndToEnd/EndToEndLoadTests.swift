import Foundation
import SealedPushAPNs
import SealedPushGateway
import SealedPushGatewayTestSupport
import SealedPushServer
import Testing

/// The gateway end to end, from the API's `202` to the emulator's `200`: a client posts send requests over HTTP
/// (32 in flight) to devices registered over the API, and each node's `DeliveryService` delivers them to the TLS +
/// HTTP/2 APNs emulator. Reports sends accepted per second, deliveries per second, p50/p99 latency per delivery
/// (from the moment the POST went out to the moment the emulator accepted that device's notification), and the bare
/// `APNsClient`'s rate to the same emulator in the same run (the ceiling), sending the very bodies the gateway sent.
///
/// Two ways to load it: as fast as the client can post (the default: throughput; the queue grows, so latency is
/// mostly time spent queued), or paced at `SEALEDPUSH_GATEWAY_E2E_RATE` send requests per second (latency at a
/// load the gateway keeps up with).
///
/// A measurement, not a check of speed: it runs only when `SEALEDPUSH_GATEWAY_E2E_LOAD` is set (the number of send
/// requests, each to 10 of 100 devices) and prints the figures; it asserts only that every delivery happened once.
@Suite(
    "End-to-end load", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["SEALEDPUSH_GATEWAY_E2E_LOAD"] != nil,
        "set SEALEDPUSH_GATEWAY_E2E_LOAD=<send requests> to measure API → delivery throughput and latency"))
struct EndToEndLoadTests {
    static var notifications: Int {
        max(1, Int(ProcessInfo.processInfo.environment["SEALEDPUSH_GATEWAY_E2E_LOAD"] ?? "") ?? 500)
    }
    /// Send requests per second to offer, or nil for as fast as `inFlight` allows.
    static var rate: Double? {
        ProcessInfo.processInfo.environment["SEALEDPUSH_GATEWAY_E2E_RATE"].flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil }
    }
    static let devices = 100
    static let fanOut = 10
    static let inFlight = 32

    @Test func sqliteOneNode() async throws { try await Self.measure(.sqlite, nodes: 1) }
    @Test func sqliteTwoNodes() async throws { try await Self.measure(.sqlite, nodes: 2) }
    @Test(.enabled(if: PostgresTestDatabase.serverURL != nil)) func postgresOneNode() async throws {
        try await Self.measure(.postgres, nodes: 1)
    }
    @Test(.enabled(if: PostgresTestDatabase.serverURL != nil)) func postgresTwoNodes() async throws {
        try await Self.measure(.postgres, nodes: 2)
    }

    /// One posted send request.
    struct Posted: Sendable {
        let id: UUID
        let devices: [String]
        let postedAt: Date
        let answeredAt: Date
    }

    static func measure(_ backend: Backend, nodes: Int) async throws {
        try await LoopbackGateway.with(
            backend, nodes: nodes,
            emulator: { emulator in
                emulator.recordedNotificationsPerToken = 1_000_000
                emulator.recordedNotificationsLimit = 1_000_000
                emulator.trackedAPNsIDs = 1_000_000
            }
        ) { gateway in
            let deviceIDs = try await gateway.registerDevices(devices)
            let count = notifications
            let total = count * fanOut

            // The client: `inFlight` POSTs at a time, spread over the nodes.
            let started = Date()
            var posted: [Posted] = []
            posted.reserveCapacity(count)
            try await withThrowingTaskGroup(of: Posted.self) { group in
                var next = 0
                while next < count || !group.isEmpty {
                    while next < count && next - posted.count < inFlight {
                        let index = next
                        if let rate {
                            let due = started.addingTimeInterval(Double(index) / rate)
                            let wait = due.timeIntervalSinceNow
                            if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
                        }
                        let recipients = (0..<fanOut).map { deviceIDs[(index * fanOut + $0) % devices] }
                        group.addTask {
                            let postedAt = Date()
                            let id = try await gateway.send(to: recipients, content: "e2e \(index)", node: index % nodes)
                            return Posted(id: id, devices: recipients, postedAt: postedAt, answeredAt: Date())
                        }
                        next += 1
                    }
                    if let done = try await group.next() { posted.append(done) }
                }
            }
            let lastAnswer = posted.map(\.answeredAt).max()!

            // Delivered: every job accepted by the emulator and finished in the store (bounded wait).
            let recorder = gateway.emulator.recorder
            let store = gateway.nodes[0].store
            let deadline = Date().addingTimeInterval(600)
            while Date() < deadline {
                if recorder.totalAccepted >= total, try await store.queueDepth().total == 0 { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(recorder.totalAccepted == total, "not everything was delivered within 600 s")

            // Exactly once, with the apns-id derived from the job; every job `sent`.
            var expected: [String: Date] = [:]  // apns-id: when its POST went out
            for send in posted {
                for device in send.devices {
                    expected[DeliveryIdentifiers.apnsID(notificationID: send.id, deviceID: device).uuidString.lowercased()] =
                        send.postedAt
                }
            }
            #expect(expected.count == total)
            let accepted = recorder.acceptedCounts
            #expect(Set(accepted.keys) == Set(expected.keys))
            #expect(accepted.values.allSatisfy { $0 == 1 })
            #expect(recorder.duplicateAcceptances == 0)
            var notSent = 0
            for send in posted {
                let status = try #require(try await store.notificationStatus(appID: LoopbackGateway.appID, notificationID: send.id))
                notSent += status.deliveries.filter { $0.state != .sent }.count
            }
            #expect(notSent == 0)

            // Latency per delivery: POST sent → accepted by the emulator.
            let received = recorder.allNotifications
            var latencies: [Double] = []
            var lastAccepted = started
            var bodies: [(token: String, body: [UInt8])] = []
            for notification in received {
                guard let postedAt = expected[notification.apnsID] else { continue }
                latencies.append(notification.acceptedAt.timeIntervalSince(postedAt))
                lastAccepted = max(lastAccepted, notification.acceptedAt)
                bodies.append((notification.deviceToken, notification.body))
            }
            latencies.sort()
            func percentile(_ p: Double) -> Double {
                latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
            }
            let acceptedRate = Double(count) / lastAnswer.timeIntervalSince(started)
            let deliveredRate = Double(total) / lastAccepted.timeIntervalSince(started)

            // The ceiling: the bare client, same emulator, same bodies, 64 in flight (the delivery default).
            let key = try APNsSigningKey(contentsOfFile: gateway.keyPath)
            var configuration = APNsClientConfiguration(
                endpoint: APNsEndpoint(host: "127.0.0.1", port: gateway.emulator.port),
                trustRoots: .pem(gateway.emulator.certificatePEM))
            configuration.requestTimeout = .seconds(10)
            configuration.deadline = .seconds(30)
            let client = try APNsClient(
                configuration: configuration,
                tokenIssuer: try ProviderTokenIssuer(key: key, keyID: LoopbackGateway.keyID, teamID: LoopbackGateway.teamID),
                logger: LoopbackGateway.quietLogger("bare"))
            let bare = try bodies.map { token, body in
                APNsNotification(deviceToken: try DeviceToken(hex: token), topic: LoopbackGateway.topic, payload: body)
            }
            let bareStart = ContinuousClock.now
            let summary = await client.send(bare, maxConcurrent: 64)
            let bareSeconds = seconds(bareStart.duration(to: .now))
            await client.shutdown()
            #expect(summary.delivered == bare.count)
            let bareRate = Double(bare.count) / bareSeconds

            print(
                "e2e | \(backend == .sqlite ? "SQLite" : "PostgreSQL") | \(nodes) | "
                    + "\(rate.map { "paced \(Int($0)) sends/s" } ?? "burst, \(inFlight) in flight") "
                    + "| \(count) sends × \(fanOut) = \(total) "
                    + "| accepted \(Int(acceptedRate))/s | delivered \(Int(deliveredRate))/s "
                    + "| p50 \(String(format: "%.0f", percentile(0.5) * 1000)) ms | p99 \(String(format: "%.0f", percentile(0.99) * 1000)) ms "
                    + "| bare APNsClient \(Int(bareRate))/s | ratio \(String(format: "%.2f", deliveredRate / bareRate))")
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
