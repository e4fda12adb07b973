import Foundation
import SealedPushAPNs
import SealedPushCore
import SealedPushGateway
import Testing

@Suite("Delivery configuration")
struct DeliveryConfigurationTests {
    static func store() throws -> (SQLiteHarness, any GatewayStore) {
        let harness = try SQLiteHarness()
        return (harness, try SQLiteGatewayStore(path: harness.path))
    }

    /// A lease shorter than the client's deadline plus the margin could end while a send is still running: refused,
    /// naming both numbers. The default configuration is accepted.
    @Test func leaseMustOutlastASend() async throws {
        let (harness, store) = try Self.store()
        var configuration = DeliveryConfiguration(nodeID: "n1")
        configuration.client.deadline = .seconds(60)
        configuration.leaseDuration = .seconds(69)
        do {
            _ = try DeliveryService(store: store, configuration: configuration)
            Issue.record("a 69 s lease with a 60 s deadline was accepted")
        } catch let error as SealedPushError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("leaseDuration"))
        }
        configuration.leaseDuration = .seconds(70)
        _ = try DeliveryService(store: store, configuration: configuration)
        _ = try DeliveryService(store: store, configuration: DeliveryConfiguration(nodeID: "n2"))
        try await store.close()
        try await harness.tearDown()
    }

    @Test func limitsAreChecked() async throws {
        let (harness, store) = try Self.store()
        var empty = DeliveryConfiguration(nodeID: "")
        #expect(throws: SealedPushError.self) { _ = try DeliveryService(store: store, configuration: empty) }
        empty.nodeID = "n"
        empty.maxConcurrentSends = 0
        #expect(throws: SealedPushError.self) { _ = try DeliveryService(store: store, configuration: empty) }
        var retries = DeliveryConfiguration(nodeID: "n")
        retries.jobRetry.maxAttempts = 0
        #expect(throws: SealedPushError.self) { _ = try DeliveryService(store: store, configuration: retries) }
        try await store.close()
        try await harness.tearDown()
    }

    /// Each environment goes to its own host.
    @Test func environmentsHaveTheirOwnEndpoints() {
        let configuration = DeliveryConfiguration(nodeID: "n")
        #expect(configuration.endpoint(for: .production) == APNsEndpoint(host: "api.push.apple.com"))
        #expect(configuration.endpoint(for: .sandbox) == APNsEndpoint(host: "api.development.push.apple.com"))
    }
}
