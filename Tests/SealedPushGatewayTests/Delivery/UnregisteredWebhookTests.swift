import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// The webhook sender against a real HTTP/1.1 server on loopback.
@Suite("Unregistered-device webhook", .serialized)
struct UnregisteredWebhookTests {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let event = UnregisteredDeviceEvent(
        appID: "alpha", deviceID: "device-9", reason: "Unregistered",
        unregisteredAt: Date(timeIntervalSince1970: 1_800_000_000))

    static func webhook(port: Int, attempts: Int = 3) throws -> UnregisteredWebhook {
        var configuration = try UnregisteredWebhookConfiguration(
            url: URL(string: "http://127.0.0.1:\(port)/events")!, secret: secret)
        configuration.maxAttempts = attempts
        configuration.initialBackoff = .milliseconds(20)
        configuration.requestTimeout = .seconds(5)
        return try UnregisteredWebhook(configuration: configuration, logger: DeliveryFixture.quietLogger("webhook"))
    }

    /// Two failures (500, 503), then 200: three signed attempts of the same event id and body.
    @Test func retriesUntilAccepted() async throws {
        let receiver = try await WebhookReceiver.start(answers: [500, 503])
        let delivered = try await Self.webhook(port: receiver.port).deliver(Self.event)
        let requests = receiver.requests
        await receiver.stop()
        #expect(delivered)
        #expect(requests.count == 3)
        #expect(Set(requests.map { $0.header("SealedPush-Delivery") ?? "" }).count == 1)
        #expect(Set(requests.map(\.body)).count == 1)
        for request in requests {
            let timestamp = try #require(request.header("SealedPush-Timestamp"))
            let mac = try HMACCheck.sha256(key: Self.secret, message: Array("\(timestamp).".utf8) + request.body)
            #expect(request.header("SealedPush-Signature") == "v1=" + hex(mac))
            #expect(request.header("Content-Type") == "application/json")
            #expect(request.header("User-Agent") == "sealed-push-gateway/\(SealedPushVersion.current)")
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(requests[0].body)) as? [String: String])
        #expect(
            object == [
                "type": "device.unregistered", "appId": "alpha", "deviceId": "device-9", "reason": "Unregistered",
                "unregisteredAt": "2027-01-15T08:00:00Z",
            ])
    }

    /// A receiver that always fails gets exactly `maxAttempts` attempts, then the event is given up.
    @Test func givesUpAfterMaxAttempts() async throws {
        let receiver = try await WebhookReceiver.start(answers: [500, 500, 500, 500, 500])
        let delivered = try await Self.webhook(port: receiver.port, attempts: 3).deliver(Self.event)
        let count = receiver.requests.count
        await receiver.stop()
        #expect(!delivered)
        #expect(count == 3)
    }

    /// Nobody listening: bounded attempts end quickly with false.
    @Test func unreachableReceiverFailsWithinItsBounds() async throws {
        let receiver = try await WebhookReceiver.start(answers: [])
        let port = receiver.port
        await receiver.stop()  // the port is now closed
        let clock = ContinuousClock()
        let started = clock.now
        let delivered = try await Self.webhook(port: port, attempts: 2).deliver(Self.event)
        #expect(!delivered)
        #expect(started.duration(to: clock.now) < .seconds(15))
    }

    /// The signature matches an HMAC-SHA256 known answer computed with Python's hmac module, and the secret never
    /// shows in the configuration's description.
    @Test func signatureKnownAnswerAndRedaction() throws {
        let configuration = try UnregisteredWebhookConfiguration(
            url: URL(string: "https://backend.example/hooks")!, secret: Self.secret)
        #expect(
            configuration.signature(timestamp: "1800000000", body: Array(#"{"a":1}"#.utf8))
                == "v1=d40e555bc2c1dae21953757b24b165a171698880732ac310a5c8cf0ab751abf2")
        #expect(!configuration.description.contains("0123456789abcdef"))
        #expect(!String(reflecting: configuration).contains("0123456789abcdef"))
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("0123456789abcdef") && !dumped.contains("key"))
        #expect(throws: SealedPushError.self) {
            try UnregisteredWebhookConfiguration(url: URL(string: "ftp://x.example/")!, secret: Self.secret)
        }
        #expect(throws: SealedPushError.self) {
            try UnregisteredWebhookConfiguration(url: URL(string: "https://x.example/")!, secret: [1, 2, 3])
        }
    }
}
