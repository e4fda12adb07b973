import Foundation
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// Jobs queued one by one (one device per send, each send waking delivery, as `serve` does) are claimed together:
/// once a claim found the queue drained, the next waits until `claimGatherInterval` after it, wake-ups or not.
/// Before, every wake-up was a claim of one job — on PostgreSQL, 10,199 claims for 10,288 one-device sends (`scripts/
/// gateway-load.sh`), half of the server's CPU.
@Suite("Claims gather jobs queued one by one", .serialized)
struct ClaimGatherTests {
    @Test func sendsQueuedAfterADrainedClaimShareTheNext() async throws {
        try await withDeliveryFixture(SQLiteHarness()) { fixture in
            let device = try await fixture.registerDevices(1)
            let notifications = try (0..<5).map { _ in try fixture.notification(to: device) }
            let counter = Counter()  // claims that took a job
            let store = HookedGatewayStore(inner: fixture.store, afterClaim: { if !$0.isEmpty { counter.count() } })
            var configuration = fixture.configuration()
            // A long window (the four sends below take 40 ms; 3 s covers them on a loaded machine too).
            configuration.pollInterval = .seconds(5)
            configuration.claimGatherInterval = .seconds(3)
            let service = try DeliveryService(
                store: store, configuration: configuration, logger: DeliveryFixture.quietLogger("gather"))
            let inner = fixture.store
            let done = Counter()  // 1 once every send is queued
            // The first send is queued before delivery starts: its first claim takes it alone and finds the queue
            // drained.
            _ = try await inner.enqueue(notifications[0])
            let queued = Task {
                while counter.value == 0 { try await Task.sleep(for: .milliseconds(5)) }
                // Four more, 10 ms apart, each waking delivery: without gathering each is a claim of its own.
                for notification in notifications.dropFirst() {
                    try await Task.sleep(for: .milliseconds(10))
                    _ = try await inner.enqueue(notification)
                    service.jobsQueued()
                }
                done.count()
            }
            let emptied = try await runServices([service], timeout: .seconds(30)) {
                guard done.value == 1 else { return false }
                return try await inner.queueIsEmpty()
            }
            try await queued.value
            #expect(emptied)
            #expect(fixture.emulator.recorder.totalAccepted == notifications.count)
            #expect(counter.value == 2, "\(counter.value) claims for 1 + 4 sends (1 + 1 when the four are gathered)")
        }
    }
}

/// A count shared between the test and the store's hook.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var counted = 0
    var value: Int { lock.withLock { counted } }
    func count() { lock.withLock { counted += 1 } }
}
