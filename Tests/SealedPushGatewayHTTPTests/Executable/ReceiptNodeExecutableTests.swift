import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import SealedPushServer
import Testing

/// A node that does not deliver (`delivery.enabled` false) still forwards the receipts it takes to the webhook: an
/// operator can take receipts on nodes apart from the delivering ones without losing the webhook.
@Suite("Gateway executable: receipts on a node that does not deliver", .serialized)
struct ReceiptNodeExecutableTests {
    @Test(arguments: Backend.available)
    func receiptsTakenWithDeliveryOffReachTheWebhook(_ backend: Backend) async throws {
        try await Self.receiptNode(backend, answers: []) { gateway, hooks, id, secret, _ in
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while hooks.requests.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let event = try #require(hooks.requests.first, "no webhook event from a node with delivery off")
            #expect(event.header("SealedPush-Event") == "notification.receipt")
            let timestamp = try #require(event.header("SealedPush-Timestamp"))
            let mac = try HMACCheck.sha256(key: Array(secret.utf8), message: Array("\(timestamp).".utf8) + event.body)
            #expect(event.header("SealedPush-Signature") == "v1=" + Hex.encode(mac))
            let body = try #require(try JSONSerialization.jsonObject(with: Data(event.body)) as? [String: Any])
            #expect(body["notificationId"] as? String == id && body["deviceId"] as? String == "phone-1")
            #expect(body["outcome"] as? String == "decrypted")
            #expect(try await gateway.terminate() == 0)
        }
    }

    /// Regression: the receipt's webhook event lived only in the process's memory, so `kill -9` while the receiver
    /// was down lost it. It is written with the receipt, in the store's outbox: after the kill it is there, under the
    /// same `SealedPush-Delivery` id the receiver saw, for the next node once the dead one's lease runs out.
    @Test(arguments: Backend.available)
    func aReceiptEventOutlivesKillNine(_ backend: Backend) async throws {
        try await Self.receiptNode(backend, answers: Array(repeating: 503, count: 1_000)) { gateway, hooks, id, _, store in
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while hooks.requests.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let tried = try #require(hooks.requests.first, "no webhook attempt")
            try await gateway.killNow()
            let waiting = try await store.claimWebhookEvents(
                owner: "next-node/1", limit: 10, leaseDuration: .seconds(60), now: Date().addingTimeInterval(61))
            #expect(waiting.count == 1)
            let event = try #require(waiting.first)
            #expect(event.deliveryID == tried.header("SealedPush-Delivery"))
            #expect(event.eventType == "notification.receipt" && event.jsonBody == tried.body)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(event.jsonBody)) as? [String: Any])
            #expect(body["notificationId"] as? String == id)
        }
    }

    /// Runs a node with delivery off and a webhook answering `answers` (then 200), registers a phone, sends it a
    /// notification and posts the phone's sealed receipt for it (answered 204); then runs `body` with the process,
    /// the receiver, the notification's id, the webhook secret and the store.
    static func receiptNode(
        _ backend: Backend, answers: [Int],
        _ body: (GatewayProcess, WebhookReceiver, String, String, any GatewayStore) async throws -> Void
    ) async throws {
        let hooks = try await WebhookReceiver.start(answers: answers)
        defer { Task { await hooks.stop() } }
        try await GatewayExecutableTests.withInitializedGateway(backend) { config, directory, store in
            let secret = "receipt-node-webhook-secret-0123"
            let secretFile = directory.appendingPathComponent("webhook.secret")
            try Data(secret.utf8).write(to: secretFile)
            chmod(secretFile.path, 0o600)
            var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
            var delivery = json["delivery"] as? [String: Any] ?? [:]
            delivery["enabled"] = false
            delivery["webhook"] = ["url": "http://127.0.0.1:\(hooks.port)/events", "secretFile": secretFile.path]
            json["delivery"] = delivery
            json["allowPlainHTTP"] = true
            try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: config))
            let key = try await Self.addKey(store)

            let gateway = try await GatewayProcess.start(
                config: config, environment: ["SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:0"],
                logPath: directory.appendingPathComponent("serve.log").path)
            let client = HTTPTestClient(port: gateway.port)
            // A phone registers and is sent a notification, which stays queued (nothing delivers here).
            let phone = directory.appendingPathComponent("phone")
            let registration = try DeviceKeyManager(directory: phone).create(now: UInt64(Date().timeIntervalSince1970))
            let registered = try await client.send(
                "PUT", "/v1/apps/shop/devices/phone-1", key: key, json: GatewayTestServer.deviceBody(registration))
            #expect(registered.status == 201)
            let sent = try await client.send(
                "POST", "/v1/apps/shop/notifications", key: key,
                json: ["devices": ["phone-1"], "content": ["title": "Hi", "body": "there"]])
            #expect(sent.status == 202)
            let id = try #require(sent.json["id"] as? String)
            // The queued job's envelope (as the phone would receive it), taken from the store.
            let job = try #require(
                try await store.claim(owner: "test", limit: 1, leaseDuration: .seconds(60), now: Date()).first)
            let header = try EnvelopeHeader(
                parsing: try APNsPayload.extractEnvelope(fromBody: job.body.bytes)[0..<EnvelopeV1.headerLength])
            let app = try #require(try await store.app(id: "shop"))
            let sealer = try ReceiptSealer(
                keyStore: FileKeyStore(directory: phone, access: .readOnly),
                serverPublicKeys: [try ServerIdentity(contentsOfFile: app.serverIdentityPath).publicKey],
                topic: "com.example.shop")
            let now = UInt64(Date().timeIntervalSince1970)
            let receipt = try sealer.seal(
                DeliveryReceipt(messageID: header.messageID, outcome: .decrypted, deviceTime: now),
                deviceKeyID: try KeyID(hex: registration.keyId), serverKeyID: header.senderKeyID, now: now)
            let posted = try await client.send(
                "POST", "/v1/apps/shop/receipts", body: Data(receipt),
                headers: ["Content-Type": "application/octet-stream"])
            #expect(posted.status == 204)
            try await body(gateway, hooks, id, secret, store)
        }
    }

    /// A second API key for the test's requests (init's key is printed, not returned by `withInitializedGateway`).
    static func addKey(_ store: any GatewayStore) async throws -> String {
        let key = APIKey.generate()
        try await store.addAPIKey(StoredAPIKey(key: key, appID: "shop", label: "test", createdAt: Date()))
        return key.text
    }
}
