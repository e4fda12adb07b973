import Foundation
import MetricsTestKit
import SealedPushGateway
import Testing

/// The node-in-use refusal names the setting an operator can set (audit finding 13): `delivery.nodeStaleSeconds`,
/// in seconds; `delivery.nodeStaleAfter` is not a setting (`serve` refuses it as unknown).
@Suite("Node in use: the message")
struct NodeInUseMessageTests {
    @Test func namesTheRealSetting() async throws {
        try await withDeliveryFixture(try SQLiteHarness()) { fixture in
            let quiet = DeliveryFixture.quietLogger("delivery")
            let first = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(nodeID: "twin"), logger: quiet,
                metricsFactory: TestMetrics())
            try await first.start()
            let second = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(nodeID: "twin"), logger: quiet,
                metricsFactory: TestMetrics())
            await #expect {
                try await second.start()
            } throws: { error in
                guard let error = error as? GatewayStoreError, error.code == .nodeInUse else { return false }
                return error.message.contains("delivery.nodeStaleSeconds") && !error.message.contains("nodeStaleAfter")
            }
        }
    }
}
