import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// Issue 17 §13 (accepted → delivered at half capacity): a send wakes the delivery loop of its own process, which
/// claims the job at once instead of at its next poll. With the poll interval set to a minute, a send is delivered
/// long before the poll would have found it (before the wake-up, every send waited for the poll: 250 ms by default,
/// 0.2 s at p50 with one send at a time).
@Suite("Delivery woken by the API", .serialized)
struct QueuedWakeUpTests {
    @Test("a send is claimed at once, not at the next poll", arguments: Backend.available)
    func sendWakesDelivery(_ backend: Backend) async throws {
        try await LifecycleEndToEndTests.withGateway(backend, delivery: { $0.pollInterval = .seconds(60) }) { gateway in
            let phone = try await LifecycleEndToEndTests.Phone(0, gateway: gateway)
            defer { phone.remove() }
            // The loop has polled once and now sleeps for its minute.
            try await Task.sleep(for: .milliseconds(300))
            let clock = ContinuousClock()
            for round in 1...3 {
                let start = clock.now
                let sent = try await gateway.nodes[0].client.send(
                    "POST", "/v1/apps/\(LoopbackGateway.appID)/notifications", key: gateway.key,
                    json: ["devices": [phone.id], "content": ["body": "round \(round)"]])
                #expect(sent.status == 202)
                // Generous: the poll would take 60 s; the wake-up takes milliseconds.
                _ = try await LifecycleEndToEndTests.pushes(gateway, phone.token, count: round)
                #expect(clock.now - start < .seconds(20), "round \(round) waited for the poll")
            }
        }
    }
}
