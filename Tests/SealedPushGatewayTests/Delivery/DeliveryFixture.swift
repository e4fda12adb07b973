import Foundation
import Logging
import Metrics
import MetricsTestKit
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import SealedPushServer
import ServiceLifecycle

/// A migrated store on a fresh database, a loopback APNs emulator that knows the app's key, the app's `.p8` in a
/// 0600 file, and devices with real keys: everything a delivery test needs, on real parts.
struct DeliveryFixture {
    static let keyID = "ABC123DEFG"
    static let teamID = "TEAM123456"
    static let appID = "alpha"
    static let topic = "com.example.alpha"

    let harness: any StoreHarness
    let store: any GatewayStore
    let emulator: APNsEmulator
    let directory: URL
    let keyPath: String
    let sealer: Sealer
    /// Each registered device's public key, by device id.
    private(set) var keys: [String: DevicePublicKey] = [:]

    /// Starts everything; `configure` adjusts the emulator (faults, unregistered or unknown tokens).
    static func start(
        _ harness: any StoreHarness, _ configure: (inout APNsEmulatorConfiguration) -> Void = { _ in }
    ) async throws -> DeliveryFixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sealedpush-delivery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyed = try await KeyedEmulator.start(in: directory, keyID: keyID, teamID: teamID, topic: topic) {
            $0.recordedNotificationsPerToken = 1_000
            $0.recordedNotificationsLimit = 100_000
            configure(&$0)
        }
        let emulator = keyed.emulator
        let keyPath = keyed.keyPath

        let store = try await harness.makeStore()
        _ = try await store.migrate()
        try await store.putApp(
            GatewayApp(
                id: appID, topic: topic, teamID: teamID, apnsKeyID: keyID, apnsKeyPath: keyPath,
                serverIdentityPath: directory.appendingPathComponent("server.spsk").path),
            now: Date())
        let sealer = try Sealer(identity: try ServerIdentity.generate(), topic: topic)
        return DeliveryFixture(
            harness: harness, store: store, emulator: emulator, directory: directory, keyPath: keyPath, sealer: sealer)
    }

    func stop() async {
        await emulator.stop()
        try? await store.close()
        try? await harness.tearDown()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A well-formed 64-hex-digit token for a device number.
    static func token(_ number: Int) -> String {
        let digits = String(number + 1, radix: 16)
        return String(repeating: "0", count: 64 - digits.count) + digits  // "a" padding made 9, 0xa9, 0xaa9 … one token
    }

    /// Registers `device-0` … `device-(count-1)` with tokens ``token(_:)`` (sandbox for even numbers, production
    /// for odd: both endpoints lead to the emulator).
    mutating func registerDevices(_ count: Int) async throws -> [String] {
        var ids: [String] = []
        for number in 0..<count {
            let id = "device-\(number)"
            let (key, registration) = try StoreFixtures.registration(createdAt: Date())
            _ = try await store.putDevice(
                appID: Self.appID, deviceID: id, apnsToken: Self.token(number),
                environment: number % 2 == 0 ? .sandbox : .production, registration: registration, now: Date())
            keys[id] = key
            ids.append(id)
        }
        return ids
    }

    /// Seals fresh content to each device and enqueues the notification (accepted now, expiring after `ttl`).
    @discardableResult
    func enqueue(
        to deviceIDs: [String], collapseID: String? = nil, createdAt: Date = Date(), ttl: TimeInterval = 3600
    ) async throws -> (notification: NewNotification, result: EnqueueResult) {
        let notification = try notification(to: deviceIDs, collapseID: collapseID, createdAt: createdAt, ttl: ttl)
        return (notification, try await store.enqueue(notification))
    }

    /// A notification sealed to `deviceIDs`, not enqueued.
    func notification(
        to deviceIDs: [String], collapseID: String? = nil, createdAt: Date = Date(), ttl: TimeInterval = 3600
    ) throws -> NewNotification {
        let jobs = try deviceIDs.map { deviceID in
            let sealed = try sealer.seal(
                NotificationContent(body: "delivery test \(UUID())"), to: keys[deviceID]!, ttl: 3600,
                now: UInt64(Date().timeIntervalSince1970))
            return NewNotification.Job(deviceID: deviceID, body: try SealedBody(apnsBody: sealed.payload))
        }
        return NewNotification(
            appID: Self.appID, priority: 10, collapseID: collapseID, createdAt: createdAt,
            expiresAt: createdAt.addingTimeInterval(ttl), jobs: jobs)
    }

    /// A delivery configuration for this emulator: both environments on it, short backoffs and intervals.
    func configuration(nodeID: String = "node-a") -> DeliveryConfiguration {
        var client = APNsClientConfiguration(
            endpoint: APNsEndpoint(host: "127.0.0.1", port: emulator.port), trustRoots: .pem(emulator.certificatePEM))
        client.retry = APNsRetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(50))
        client.requestTimeout = .seconds(10)
        client.deadline = .seconds(30)
        var configuration = DeliveryConfiguration(nodeID: nodeID, client: client)
        configuration.productionEndpoint = client.endpoint
        configuration.sandboxEndpoint = client.endpoint
        configuration.leaseDuration = .seconds(45)
        configuration.maxConcurrentSends = 16
        configuration.pollInterval = .milliseconds(50)
        configuration.expirySweepInterval = .milliseconds(200)
        configuration.jobRetry = APNsRetryPolicy(
            maxAttempts: 20, initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(200))
        configuration.shutdownGracePeriod = .seconds(10)
        return configuration
    }

    /// Every delivery of a notification, by device id.
    func deliveries(_ id: UUID) async throws -> [String: NotificationStatus.Delivery] {
        guard let status = try await store.notificationStatus(appID: Self.appID, notificationID: id) else {
            throw HarnessError("notification \(id) not found")
        }
        return Dictionary(uniqueKeysWithValues: status.deliveries.map { ($0.deviceID, $0) })
    }

    static func quietLogger(_ label: String) -> Logger {
        var logger = Logger(label: "test.\(label)")
        logger.logLevel = .critical
        return logger
    }
}

/// Runs `fixture` started on `harness` through `body`, and always stops it.
func withDeliveryFixture(
    _ harness: any StoreHarness, _ configure: (inout APNsEmulatorConfiguration) -> Void = { _ in },
    _ body: (inout DeliveryFixture) async throws -> Void
) async throws {
    var fixture = try await DeliveryFixture.start(harness, configure)
    do {
        try await body(&fixture)
    } catch {
        await fixture.stop()
        throw error
    }
    await fixture.stop()
}

/// Runs `services` in a service group until `done` holds (checked every 50 ms, at most `timeout`), then shuts the
/// group down gracefully and waits for it.
/// - Returns: Whether `done` held before the timeout.
@discardableResult
func runServices(
    _ services: [DeliveryService], timeout: Duration = .seconds(120), until done: @escaping @Sendable () async throws -> Bool
) async throws -> Bool {
    let group = ServiceGroup(services: services, logger: DeliveryFixture.quietLogger("group"))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var reached = false
        while clock.now < deadline {
            if try await done() {
                reached = true
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return reached
    }
}

extension GatewayStore {
    /// True when no job is waiting or claimed.
    func queueIsEmpty() async throws -> Bool { try await queueDepth().total == 0 }
}
