import Foundation
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// The real PostgreSQL server restarts while two gateway nodes deliver a few thousand notifications: the nodes'
/// pools reconnect, every job ends `sent`, `/healthz` says not-ready while the server is down and ready after.
///
/// A send whose outcome could not be written while the server was down is sent again after its lease: those
/// duplicates are counted, bounded by the sends that can be in flight, and each copy must carry the same body and
/// collapse id as the first (so APNs collapses it).
///
/// Needs `SEALEDPUSH_TEST_POSTGRES_RESTART`: a shell command that restarts the server behind
/// `SEALEDPUSH_TEST_POSTGRES_URL`, keeping its data, given the seconds to stay down as its last argument
/// (`scripts/test` sets it to `scripts/postgres-test.sh restart` for a cluster it owns, and always under CI). Restarting
/// disturbs every other test on that server, so `scripts/test` runs this suite on its own.
@Suite(
    "PostgreSQL restarts mid-run", .serialized,
    .enabled(
        if: PostgresTestDatabase.serverURL != nil
            && !(ProcessInfo.processInfo.environment["SEALEDPUSH_TEST_POSTGRES_RESTART"] ?? "").isEmpty,
        "needs SEALEDPUSH_TEST_POSTGRES_URL and SEALEDPUSH_TEST_POSTGRES_RESTART (a command restarting that server: scripts/test sets it for a cluster it started)"))
struct PostgresRestartTests {
    static let devices = 100
    static let notifications = 40
    static let maxConcurrentSends = 16
    static let downSeconds = 3

    @Test func deliveryLosesNothingAcrossARestart() async throws {
        let nodeCount = 2
        try await LoopbackGateway.with(
            .postgres, nodes: nodeCount,
            emulator: { emulator in
                emulator.recordedNotificationsPerToken = 1_000
                emulator.recordedNotificationsLimit = 100_000
                // Slower answers keep sends in flight, so the restart lands on sends (and finishes) in progress.
                emulator.faults = .init(random: [.init(.slow(milliseconds: 50), probability: 1)])
            },
            delivery: { delivery in
                delivery.maxConcurrentSends = Self.maxConcurrentSends
                delivery.client.requestTimeout = .seconds(3)
                delivery.client.deadline = .seconds(5)
                delivery.leaseDuration = .seconds(15)  // the least allowed: deadline + 10 s
                delivery.pollInterval = .milliseconds(50)
                delivery.jobRetry = .init(maxAttempts: 20, initialBackoff: .milliseconds(100), maxBackoff: .seconds(1))
            }
        ) { gateway in
            let clock = ContinuousClock()
            let testStart = clock.now
            let deviceIDs = try await gateway.registerDevices(Self.devices)
            // The backend posts while the nodes deliver (and while the server restarts: a 503 is retried with the
            // same Idempotency-Key, so a send is never enqueued twice).
            let posting = Task {
                var ids: [UUID] = []
                for index in 0..<Self.notifications {
                    ids.append(
                        try await gateway.send(
                            to: deviceIDs, content: "restart \(index)", node: index % nodeCount,
                            collapseID: index % 2 == 0 ? "restart-\(index)" : nil, idempotencyKey: "restart-\(index)",
                            retries: 40))
                }
                return ids
            }
            defer { posting.cancel() }
            let total = Self.notifications * Self.devices
            let recorder = gateway.emulator.recorder

            // Restart once a part is delivered, while the rest is still queued.
            try await waitUntil(timeout: .seconds(120), "a tenth delivered") { recorder.totalAccepted >= total / 10 }
            let acceptedBeforeRestart = recorder.totalAccepted
            #expect(acceptedBeforeRestart < total / 2, "too late for a mid-run restart: \(acceptedBeforeRestart)")
            let restart = Process()
            restart.executableURL = URL(fileURLWithPath: "/bin/bash")
            restart.arguments = [
                "-c", ProcessInfo.processInfo.environment["SEALEDPUSH_TEST_POSTGRES_RESTART"]! + " \(Self.downSeconds)",
            ]
            restart.standardOutput = FileHandle.nullDevice
            restart.standardError = FileHandle.nullDevice
            let restartStart = clock.now
            try restart.run()

            // /healthz while the server is down and restarting: not ready (503) at least once.
            var healthWhileRestarting: [Int] = []
            while restart.isRunning {
                if restartStart.duration(to: clock.now) > .seconds(60) {
                    restart.terminate()
                    throw TestFailure("the restart command did not finish within 60 s")
                }
                healthWhileRestarting.append(try await gateway.nodes[0].client.send("GET", "/healthz").status)
                try await Task.sleep(for: .milliseconds(200))
            }
            let restartTook = restartStart.duration(to: clock.now)
            #expect(restart.terminationStatus == 0, "the restart command failed: \(restart.terminationStatus)")
            #expect(healthWhileRestarting.contains(503), "healthz while down: \(healthWhileRestarting)")
            #expect(healthWhileRestarting.allSatisfy { $0 == 200 || $0 == 503 })

            // Ready again: every node's pool reconnects (healthz on each, within a deadline).
            for node in gateway.nodes {
                try await waitUntil(timeout: .seconds(30), "\(node.id) healthz ready again") {
                    try await node.client.send("GET", "/healthz").status == 200
                }
            }
            let acceptedAtReady = recorder.totalAccepted
            let ids = try await posting.value
            #expect(Set(ids).count == Self.notifications)

            // Everything is delivered; the jobs whose outcome was lost come back after their lease (15 s).
            try await waitUntil(timeout: .seconds(180), "the queue to empty") {
                guard recorder.totalAccepted >= total else { return false }
                return try await gateway.nodes[0].store.queueDepth().total == 0
            }
            #expect(acceptedAtReady < total, "everything was delivered before the server came back: no proof of reconnecting")

            var sentIDs: Set<String> = []
            var resent = 0
            for id in ids {
                let status = try #require(
                    try await gateway.nodes[1].store.notificationStatus(appID: LoopbackGateway.appID, notificationID: id))
                #expect(status.deliveries.count == Self.devices)
                for delivery in status.deliveries {
                    #expect(delivery.state == .sent, "\(delivery.deviceID): \(delivery.state) \(delivery.reason ?? "")")
                    let derived = DeliveryIdentifiers.apnsID(notificationID: id, deviceID: delivery.deviceID)
                    #expect(delivery.apnsID == derived.uuidString.lowercased())
                    sentIDs.insert(derived.uuidString.lowercased())
                    if delivery.attempts > 1 { resent += 1 }
                }
            }
            #expect(sentIDs.count == total)

            // Each apns-id accepted at least once; duplicates only from sends in flight around the restart.
            let accepted = recorder.acceptedCounts
            #expect(Set(accepted.keys) == sentIDs)
            let duplicates = accepted.values.reduce(0) { $0 + max(0, $1 - 1) }
            #expect(duplicates == recorder.duplicateAcceptances)
            #expect(
                duplicates <= nodeCount * Self.maxConcurrentSends,
                "\(duplicates) duplicates: more than the \(nodeCount * Self.maxConcurrentSends) sends that can be in flight")
            #expect(duplicates <= resent, "a duplicate without a second claim")
            // Every copy of a job carries the same body and collapse id.
            var bodies: [String: Set<[UInt8]>] = [:]
            var collapseIDs: [String: Set<String>] = [:]
            for number in 0..<Self.devices {
                for received in recorder.notifications(for: LoopbackGateway.token(number)) {
                    bodies[received.apnsID, default: []].insert(received.body)
                    collapseIDs[received.apnsID, default: []].insert(received.collapseID ?? "")
                }
            }
            #expect(bodies.count == total)
            #expect(bodies.values.allSatisfy { $0.count == 1 })
            #expect(collapseIDs.values.allSatisfy { $0.count == 1 && !$0.contains("") })
            print(
                "PostgreSQL restart: \(total) jobs on \(nodeCount) nodes in \(testStart.duration(to: clock.now)); restart "
                    + "after \(acceptedBeforeRestart) deliveries took \(restartTook); healthz while restarting "
                    + "\(healthWhileRestarting); \(acceptedAtReady) delivered when ready again; \(resent) jobs claimed "
                    + "again, \(duplicates) duplicates accepted")
        }
    }

    /// Polls `condition` every 50 ms; fails the test if it does not hold within `timeout`.
    private func waitUntil(
        timeout: Duration, _ what: String, _ condition: () async throws -> Bool
    ) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("waited \(timeout) for \(what)")
    }
}
