import Foundation
import MetricsTestKit
import SealedPushGateway
import SealedPushGatewayTestSupport
import Synchronization
import Testing

/// A send's jobs handed to the delivery service of the same process (`DeliveryService.reserve(jobs:)`, then the
/// enqueue under its lease, then `deliver(_:reserved:)`): sent without a claim — one store transaction less per
/// send, and no claim to plan on PostgreSQL — but only once the queue is drained, so newer jobs never pass queued
/// ones. Jobs handed over after the service stopped stay claimed and go out at the node's next start.
@Suite("Jobs handed over at enqueue", .serialized)
struct HandOverTests {
    @Test func handedOverJobsAreSentWithoutAClaimOnceTheQueueIsDrained() async throws {
        try await withDeliveryFixture(SQLiteHarness()) { fixture in
            let devices = try await fixture.registerDevices(3)
            let claimed = IDs()  // every job a claim returned
            let store = HookedGatewayStore(inner: fixture.store, afterClaim: { jobs in claimed.add(jobs.map(\.id)) })
            let metrics = TestMetrics()
            let service = try DeliveryService(
                store: store, configuration: fixture.configuration(), logger: DeliveryFixture.quietLogger("handover"),
                metricsFactory: metrics)
            #expect(service.reserve(jobs: 1) == nil, "not started")
            // Accepted 30 s (the queued one) and 60 s ago (the two handed over): their delivery latency counts from then.
            let began = Date()
            let (queued, _) = try await fixture.enqueue(to: [devices[0]], createdAt: began.addingTimeInterval(-30))
            try await service.start()
            #expect(service.reserve(jobs: 1) == nil, "nothing claimed yet: the queue may hold jobs")
            let inner = fixture.store
            let emulator = fixture.emulator
            let toHandOver = try fixture.notification(
                to: [devices[1], devices[2]], createdAt: began.addingTimeInterval(-60))
            let handed = Task {
                // The first claim takes the queued job and finds the queue drained: from then on jobs are handed over.
                let lease = try await reserveWithinTenSeconds(service, jobs: 2)
                #expect(lease != nil, "the queue was drained within 10 s")
                #expect(service.reserve(jobs: 5) == nil, "more jobs than a claim batch (4 of 16 slots) go to the queue")
                var notification = toHandOver
                notification.lease = lease
                let result = try await inner.enqueue(notification)
                #expect(result.claimed.count == 2)
                service.deliver(result.claimed, reserved: 2)
                return (notification.id, result.claimed.map(\.id))
            }
            let sent = try await runServices([service], timeout: .seconds(30)) {
                emulator.recorder.totalAccepted == 3
            }
            let (handedID, handedJobs) = try await handed.value
            #expect(sent)
            #expect(try await fixture.deliveries(queued.id).values.map(\.state) == [.sent])
            #expect(try await fixture.deliveries(handedID).values.allSatisfy { $0.state == .sent && $0.attempts == 1 })
            #expect(claimed.all.count == 1, "only the queued job was claimed")
            #expect(Set(claimed.all).isDisjoint(with: handedJobs))
            let started = "sealedpush_gateway_jobs_started_total"
            #expect(metrics.counterTotal(label: started, dimensions: [("platform", "apns"), ("path", "claim")]) == 1)
            #expect(metrics.counterTotal(label: started, dimensions: [("platform", "apns"), ("path", "handover")]) == 2)
            let took = Date().timeIntervalSince(began)
            let latencies = try metrics.expectTimer("sealedpush_gateway_delivery_seconds", [("platform", "apns")])
                .values.map { Double($0) / 1e9 }.sorted()
            #expect(latencies.count == 3)
            #expect(latencies.first.map { $0 >= 30 && $0 <= 30 + took } == true, "claimed: \(latencies)")
            #expect(latencies.dropFirst().allSatisfy { $0 >= 60 && $0 <= 60 + took }, "handed over: \(latencies)")
        }
    }

    /// Under a steady stream of sends some are queued while every claim runs (their slots were taken for a moment).
    /// A claim that finds fewer jobs than it asked for still drains the queue: those sends' wake-up makes the loop
    /// claim them at once, and newer sends are handed over again. (Before: the queue counted as drained only after a
    /// claim that nothing was queued during, so the node stayed on the queue — a claim transaction more per job — for
    /// as long as the stream lasted: here, the 200 claims the hook queues a send during — at least a second, as each
    /// claim after a short one waits for the gather interval.)
    @Test func handOverResumesWhileSendsAreQueuedDuringClaims() async throws {
        try await withDeliveryFixture(SQLiteHarness()) { fixture in
            let devices = try await fixture.registerDevices(2)
            let claims = Mutex(0)
            let box = Mutex<DeliveryService?>(nil)  // the service the hook calls back, once it exists
            let store = HookedGatewayStore(inner: fixture.store, afterClaim: { _ in
                // What the HTTP API does when it queues a send: while this claim runs, for the first 200 claims.
                let claim = claims.withLock { count in
                    count += 1
                    return count
                }
                if claim <= 200 { box.withLock { $0 }?.jobsQueued() }
            })
            var configuration = fixture.configuration()
            configuration.pollInterval = .seconds(10)  // only wake-ups make the loop claim within the test
            let service = try DeliveryService(
                store: store, configuration: configuration, logger: DeliveryFixture.quietLogger("stream"))
            box.withLock { $0 = service }
            let (queued, _) = try await fixture.enqueue(to: [devices[0]])
            let inner = fixture.store
            let emulator = fixture.emulator
            let toHandOver = try fixture.notification(to: [devices[1]])
            let handed = Task {
                let lease = try await reserveWithinTenSeconds(service, jobs: 1)
                let claimsBefore = claims.withLock { $0 }
                let reserved: JobLease = try #require(lease, "a slot was reserved within 10 s")
                var notification = toHandOver
                notification.lease = reserved
                let result = try await inner.enqueue(notification)
                service.deliver(result.claimed, reserved: 1)
                return (notification.id, claimsBefore)
            }
            let sent = try await runServices([service], timeout: .seconds(30)) {
                emulator.recorder.totalAccepted == 2
            }
            let (handedID, claimsBefore) = try await handed.value
            #expect(sent)
            #expect(claimsBefore < 200, "handed over while sends were still queued during claims (after \(claimsBefore))")
            #expect(try await fixture.deliveries(queued.id).values.map(\.state) == [.sent])
            #expect(try await fixture.deliveries(handedID).values.map(\.state) == [.sent])
        }
    }

    @Test func jobsHandedOverAfterStopAreSentAtTheNextStart() async throws {
        try await withDeliveryFixture(SQLiteHarness()) { fixture in
            let devices = try await fixture.registerDevices(1)
            var configuration = fixture.configuration()
            configuration.leaseDuration = .seconds(300)  // far beyond the test: only the restart can send the job
            let first = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("first"))
            let leases = Leases()
            // Runs until the queue is drained and a slot is reserved, then stops.
            try await runServices([first], timeout: .seconds(30)) {
                if let lease = first.reserve(jobs: 1) { leases.add(lease) }
                return !leases.all.isEmpty
            }
            var notification = try fixture.notification(to: devices)
            let lease: JobLease = try #require(leases.all.first)
            notification.lease = lease
            let result = try await fixture.store.enqueue(notification)
            first.deliver(result.claimed, reserved: 1)  // too late: the first incarnation stopped
            try await Task.sleep(for: .milliseconds(200))
            #expect(fixture.emulator.recorder.totalAccepted == 0)
            #expect(try await fixture.deliveries(notification.id).values.map(\.state) == [.claimed])

            let second = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("second"))
            let emulator = fixture.emulator
            let sent = try await runServices([second], timeout: .seconds(20)) {
                emulator.recorder.totalAccepted == 1
            }
            #expect(sent, "the restart takes back the first incarnation's lease (300 s) at once")
            #expect(try await fixture.deliveries(notification.id).values.map(\.state) == [.sent])
        }
    }
}

/// Asks `service` for `jobs` slots every millisecond until it reserves them, for at most ten seconds.
/// - Returns: The lease, or nil when none was reserved in time.
private func reserveWithinTenSeconds(_ service: DeliveryService, jobs: Int) async throws -> JobLease? {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .seconds(10))
    while clock.now < deadline {
        if let lease = service.reserve(jobs: jobs) { return lease }
        try await Task.sleep(for: .milliseconds(1))
    }
    return nil
}

/// Job ids collected by a store hook.
private final class IDs: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [Int64] = []
    var all: [Int64] { lock.withLock { ids } }
    func add(_ more: [Int64]) { lock.withLock { ids += more } }
}

/// Leases collected while a service runs.
private final class Leases: @unchecked Sendable {
    private let lock = NSLock()
    private var leases: [JobLease] = []
    var all: [JobLease] { lock.withLock { leases } }
    func add(_ lease: JobLease) { lock.withLock { leases.append(lease) } }
}
