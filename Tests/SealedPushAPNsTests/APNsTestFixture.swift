import Foundation
import Logging
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushServer

/// A loopback emulator plus clients that trust its certificate and share its auth key.
struct APNsTestFixture {
    static let keyID = "ABC123DEFG"
    static let teamID = "TEAM123456"
    static let topic = "com.example.sealedpush"

    let emulator: APNsEmulator
    let keyPEM: [UInt8]

    /// Starts an emulator with a fresh key; `configure` adjusts its configuration.
    static func start(
        _ configure: (inout APNsEmulatorConfiguration) -> Void = { _ in }
    ) async throws -> APNsTestFixture {
        let pem = try APNsKeyGenerator.generatePEM()
        var configuration = APNsEmulatorConfiguration(
            authKeyPEM: String(decoding: pem, as: UTF8.self), keyID: keyID, teamID: teamID)
        configure(&configuration)
        let emulator = try APNsEmulator(configuration: configuration, logger: quietLogger("emulator"))
        try await emulator.start()
        return APNsTestFixture(emulator: emulator, keyPEM: pem)
    }

    /// A client configuration for this emulator with short backoffs.
    func clientConfiguration() -> APNsClientConfiguration {
        var configuration = APNsClientConfiguration(
            endpoint: APNsEndpoint(host: "127.0.0.1", port: emulator.port), trustRoots: .pem(emulator.certificatePEM))
        configuration.retry = APNsRetryPolicy(
            maxAttempts: 4, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(50))
        configuration.requestTimeout = .seconds(10)
        configuration.deadline = .seconds(30)
        return configuration
    }

    /// A client signing with this fixture's key (or `keyPEM` if given).
    func makeClient(
        _ configuration: APNsClientConfiguration? = nil, keyPEM: [UInt8]? = nil, keyID: String = Self.keyID
    ) throws -> APNsClient {
        let key = try APNsSigningKey(pemBytes: keyPEM ?? self.keyPEM)
        let issuer = try ProviderTokenIssuer(key: key, keyID: keyID, teamID: Self.teamID)
        return try APNsClient(
            configuration: configuration ?? clientConfiguration(), tokenIssuer: issuer,
            logger: Self.quietLogger("client"))
    }

    func stop() async {
        await emulator.stop()
    }

    static func quietLogger(_ label: String) -> Logger {
        var logger = Logger(label: "test.\(label)")
        logger.logLevel = .critical
        return logger
    }

    /// A well-formed device token made from a number.
    static func deviceToken(_ number: Int) -> DeviceToken {
        let digits = String(number, radix: 16)
        let hex = String(repeating: "0", count: max(0, 64 - digits.count)) + digits
        // Force-unwrapping is confined to test fixtures with known-valid input.
        return try! DeviceToken(hex: hex)
    }

    static let payload = Array(#"{"aps":{"alert":{"body":"New notification"},"mutable-content":1},"sp":"AAAA"}"#.utf8)

    func notification(_ number: Int, payload: [UInt8] = APNsTestFixture.payload) -> APNsNotification {
        APNsNotification(deviceToken: Self.deviceToken(number), topic: Self.topic, payload: payload)
    }
}

/// Runs `body` with a started fixture and always stops the emulator.
func withFixture(
    _ configure: (inout APNsEmulatorConfiguration) -> Void = { _ in },
    _ body: (APNsTestFixture) async throws -> Void
) async throws {
    let fixture = try await APNsTestFixture.start(configure)
    do {
        try await body(fixture)
    } catch {
        await fixture.stop()
        throw error
    }
    await fixture.stop()
}

/// A thread-safe list for collecting reports from concurrent callbacks.
final class Collector<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []

    func append(_ element: Element) { lock.withLock { elements.append(element) } }
    var all: [Element] { lock.withLock { elements } }
}
