import Foundation
import Logging
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushServer
import Testing

/// Captures every log line with its metadata, as text.
final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    final class Store: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(store: Store) { self.store = store }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        store.append("\(event.level) \(event.message) \(merged)")
    }
}

@Suite("APNs logging")
struct APNsLoggingTests {
    @Test func logsCarryNoTokenJWTOrPayload() async throws {
        let secret = "SECRET-CONTENT-4242"
        let payload = Array(#"{"aps":{"alert":{"body":"x"},"mutable-content":1},"sp":"\#(secret)"}"#.utf8)
        let gone = APNsTestFixture.deviceToken(410)
        try await withFixture({ configuration in
            configuration.unregisteredDeviceTokens = [gone.hex: Date()]
            configuration.faults = EmulatorFaultPlan(script: [nil, .serviceUnavailable, nil, .goAway])
        }) { fixture in
            let store = CapturingLogHandler.Store()
            var logger = Logger(label: "test.capture") { _ in CapturingLogHandler(store: store) }
            logger.logLevel = .trace
            let key = try APNsSigningKey(pemBytes: fixture.keyPEM)
            let issuer = try ProviderTokenIssuer(key: key, keyID: APNsTestFixture.keyID, teamID: APNsTestFixture.teamID)
            let client = try APNsClient(
                configuration: fixture.clientConfiguration(), tokenIssuer: issuer, logger: logger)
            var tokens: [DeviceToken] = []
            for number in 1...6 {
                let notification = fixture.notification(number, payload: payload)
                tokens.append(notification.deviceToken)
                _ = await client.send(notification)
            }
            _ = await client.send(APNsNotification(deviceToken: gone, topic: APNsTestFixture.topic, payload: payload))
            await client.shutdown()

            let lines = store.all
            #expect(lines.count >= 7)  // something was logged, so the checks below mean something
            for line in lines {
                #expect(!line.contains(secret), "payload content in log: \(line)")
                #expect(!line.contains("eyJ"), "a JWT in log: \(line)")  // every JWT starts with b64url("{\"")
                #expect(!line.contains("bearer"), "an authorization header in log: \(line)")
                for token in tokens + [gone] {
                    #expect(!line.contains(token.hex), "a full device token in log: \(line)")
                }
            }
        }
    }
}
