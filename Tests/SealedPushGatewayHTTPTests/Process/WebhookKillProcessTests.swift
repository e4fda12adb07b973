import Foundation
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// The real `sealed-push-gateway serve` delivering to the APNs emulator, its webhook receiver down, killed with
/// SIGKILL and started again.
@Suite("Gateway process: webhook events across kill -9", .serialized)
struct WebhookKillProcessTests {
    /// Regression: the event of a device APNs called unregistered lived only in the process's memory; after `kill -9`
    /// it was gone, and the restarted node never posted it. It is written to the outbox with the job's end: the
    /// restarted node (same node id) takes it back at start — not after the dead process's 60-second lease — and
    /// posts it with the `SealedPush-Delivery` id the receiver saw before.
    @Test func anUnregisteredDevicesEventOutlivesKillNine() async throws {
        let setup = try await GatewayWithEmulator.start {
            $0.unregisteredDeviceTokens = [GatewayWithEmulator.token(1): Date(timeIntervalSince1970: 1_700_000_000)]
        }
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let down = try await WebhookReceiver.start(answers: Array(repeating: 503, count: 100_000))
        let secretFile = setup.directory.appendingPathComponent("webhook.secret")
        try Data("kill-nine-webhook-secret-0123456".utf8).write(to: secretFile)
        chmod(secretFile.path, 0o600)
        try Self.pointWebhook(at: down.port, secretFile: secretFile.path, setup)

        let first = try await GatewayProcess.start(
            config: setup.configPath, environment: setup.environment,
            logPath: setup.directory.appendingPathComponent("serve-1.log").path)
        let client = HTTPTestClient(port: first.port)
        _ = try await setup.register(1, client: client)
        let sent = try await client.send(
            "POST", "/v1/apps/\(GatewayWithEmulator.appID)/notifications", key: setup.apiKey,
            json: ["devices": ["device-1"], "content": ["body": "hello"]])
        #expect(sent.status == 202, "\(sent.text)")
        try await Self.waitUntil { !down.requests.isEmpty }
        let tried = try #require(down.requests.first, "no webhook attempt; log:\n\(GatewayProcess.tail(first.logPath))")
        let deliveryID = try #require(tried.header("SealedPush-Delivery"))
        try await first.killNow()
        await down.stop()

        let up = try await WebhookReceiver.start(answers: [])
        try Self.pointWebhook(at: up.port, secretFile: secretFile.path, setup)
        let second = try await GatewayProcess.start(
            config: setup.configPath, environment: setup.environment,
            logPath: setup.directory.appendingPathComponent("serve-2.log").path)
        let restarted = ContinuousClock.now
        try await Self.waitUntil { !up.requests.isEmpty }
        let posted = try #require(up.requests.first, "not posted after the restart; log:\n\(GatewayProcess.tail(second.logPath))")
        #expect(restarted.duration(to: .now) < .seconds(20), "waited for the dead process's lease")
        #expect(posted.header("SealedPush-Delivery") == deliveryID)
        #expect(posted.header("SealedPush-Event") == "device.unregistered")
        #expect(posted.body == tried.body)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(posted.body)) as? [String: Any])
        #expect(body["deviceId"] as? String == "device-1" && body["reason"] as? String == "Unregistered")
        #expect(body["unregisteredAt"] as? String == "2023-11-14T22:13:20Z")
        #expect(try await second.terminate() == 0)
        #expect(up.requests.count == 1)
        await up.stop()
    }

    /// Sets the configuration's webhook to a receiver on loopback (plain HTTP allowed for it).
    static func pointWebhook(at port: Int, secretFile: String, _ setup: GatewayWithEmulator) throws {
        try setup.setDelivery(["webhook": ["url": "http://127.0.0.1:\(port)/events", "secretFile": secretFile]])
        let url = URL(fileURLWithPath: setup.configPath)
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        json["allowPlainHTTP"] = true
        try JSONSerialization.data(withJSONObject: json).write(to: url)
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
    }
}
