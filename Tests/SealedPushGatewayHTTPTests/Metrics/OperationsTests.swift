import Foundation
import SealedPushGateway
import Testing

/// `/healthz`, `/metrics`, and where plaintext may never be found.
@Suite("Gateway HTTP: operations and plaintext", .serialized)
struct OperationsTests {
    @Test(arguments: Backend.available)
    func healthzPingsTheStore(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let health = try await server.client.send("GET", "/healthz")
            #expect(health.status == 200)
            #expect(health.json["status"] as? String == "ok")
            #expect(health.json["database"] as? String == "ok")
        }
    }

    /// A known path with a method the contract does not declare is `405` with `Allow` (schemathesis's
    /// unsupported-method check); an unknown path stays `404`.
    @Test func undeclaredMethodsAre405WithAllow() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let key = server.keys["app1"]!
            let cases: [(method: String, path: String, allow: String)] = [
                ("TRACE", "/healthz", "GET, HEAD"), ("POST", "/metrics", "GET, HEAD"),
                ("PATCH", "/v1/apps/app1/devices/phone", "PUT, GET, HEAD, DELETE"),
                ("GET", "/v1/apps/app1/notifications", "POST"),
                ("PUT", "/v1/apps/app1/notifications/\(UUID())", "GET, HEAD, DELETE"),
                ("GET", "/v1/apps/app1/notifications/\(UUID())/update", "POST"),
                ("GET", "/v1/apps/app1/receipts", "POST"),
                ("PUT", "/v1/apps/app1/badge", "POST"),
                ("QUERY", "/v1/apps/app1/notifications", "POST"),
            ]
            for (method, path, allow) in cases {
                let answer = try await server.client.send(method, path, key: key)
                #expect(answer.status == 405, "\(method) \(path)")
                #expect(answer.header("Allow") == allow, "\(method) \(path)")
                #expect(answer.json["code"] as? String == "methodNotAllowed")
            }
            #expect(try await server.client.send("GET", "/v1/apps/app1/elsewhere", key: key).status == 404)
            #expect(try await server.client.send("TRACE", "/nowhere").status == 404)
            // A handler's own 404 is not turned into 405.
            #expect(try await server.client.send("GET", "/v1/apps/app1/devices/nobody", key: key).status == 404)
        }
    }

    @Test func healthzAnswers503WhenTheStoreIsGone() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            try await server.store.close()
            let health = try await server.client.send("GET", "/healthz")
            #expect(health.status == 503)
            #expect(health.json["database"] as? String == "unavailable")
        }
    }

    @Test(arguments: Backend.available)
    func metricsCountWhatHappened(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("a")
            try await server.registerDevice("b")
            let before = try await server.client.send("GET", "/metrics")
            #expect(before.status == 200)
            #expect(before.header("Content-Type")?.hasPrefix("text/plain") == true)
            #expect(Self.value("sealedpush_gateway_accepted_total", in: before.text) == 0)

            for _ in 0..<3 {
                _ = try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: key, json: ["devices": ["a", "b"], "content": ["body": "m"]])
            }
            // A replay is not counted again.
            for _ in 0..<2 {
                _ = try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: key, json: ["devices": ["a"], "content": ["body": "m"]],
                    headers: ["Idempotency-Key": "k"])
            }
            let after = try await server.client.send("GET", "/metrics")
            #expect(Self.value("sealedpush_gateway_accepted_total", in: after.text) == 4)
            #expect(Self.value("sealedpush_gateway_sealed_total", in: after.text) == 7)
            #expect(Self.value("sealedpush_gateway_queue_depth", in: after.text) == 7)
            #expect(Self.value("sealedpush_gateway_seal_seconds_count", in: after.text) == 7)
            // The 4 notifications enqueued (the replay is not), in however many group commits, each one timed.
            let enqueue = ["write": "enqueue"]
            #expect(Self.sum("sealedpush_gateway_store_batch_size_sum", labels: enqueue, in: after.text) == 4)
            let batches = Self.sum("sealedpush_gateway_store_batch_size_count", labels: enqueue, in: after.text)
            #expect((1...4).contains(batches))
            let timed = Self.sum("sealedpush_gateway_store_write_seconds_count", labels: enqueue, in: after.text)
            #expect(timed == batches)
            // No delivery service runs in this server: nothing is sent or retried on any platform.
            for name in ["sealedpush_gateway_sent_total", "sealedpush_gateway_retries_total"] {
                #expect(Self.sum(name, in: after.text) == 0)
            }
            // An event waiting in the webhook's outbox — written with the job's end that unregistered its device —
            // is counted at the next scrape.
            #expect(Self.value("sealedpush_gateway_webhook_outbox_events", in: after.text) == 0)
            let job = try #require(
                try await server.store.claim(owner: "test/1", limit: 1, leaseDuration: .seconds(60), now: Date()).first)
            _ = try await server.store.finish([
                JobFinish(
                    jobID: job.id, owner: "test/1", outcome: .unregistered(reason: "Unregistered"), requests: 1,
                    transientReason: nil, now: Date(),
                    webhookEvent: UnregisteredDeviceEvent(
                        appID: "app1", deviceID: job.deviceID, reason: "Unregistered", unregisteredAt: Date()))
            ])
            let waiting = try await server.client.send("GET", "/metrics")
            #expect(Self.value("sealedpush_gateway_webhook_outbox_events", in: waiting.text) == 1)
            #expect(Self.value("sealedpush_gateway_webhook_given_up_events", in: waiting.text) == 0)
            // Given up by a node (its attempts spent): kept for the operator, counted apart from the backlog.
            let event = try #require(
                try await server.store.claimWebhookEvents(
                    owner: "test/1", limit: 1, leaseDuration: .seconds(60), now: Date()
                ).first)
            #expect(
                try await server.store.giveUpWebhookEvent(
                    id: event.id, owner: "test/1", attempts: 8, failure: "HTTP 503", now: Date()))
            let givenUp = try await server.client.send("GET", "/metrics")
            #expect(Self.value("sealedpush_gateway_webhook_outbox_events", in: givenUp.text) == 0)
            #expect(Self.value("sealedpush_gateway_webhook_given_up_events", in: givenUp.text) == 1)
        }
    }

    /// Every answer is counted by its route's pattern (never the app's or the device's id), method and status; a path
    /// or method no route has as `NotFound`, a method outside the usual ones as `other`.
    @Test func requestMetricsCountAnswersByRoute() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("a")
            try await server.registerDevice("b")
            let send: [String: Any] = ["devices": ["a"], "content": ["body": "m"]]
            let path = "/v1/apps/app1/notifications"
            for _ in 0..<3 { #expect(try await server.client.send("POST", path, key: key, json: send).status == 202) }
            #expect(try await server.client.send("POST", path, key: "sp_wrong", json: send).status == 401)
            #expect(try await server.client.send("GET", "/v1/apps/app1/devices/b", key: key).status == 200)
            #expect(try await server.client.send("GET", "/admin").status == 404)
            #expect(try await server.client.send("QUERY", "/healthz").status == 405)
            let text = try await server.client.send("GET", "/metrics").text
            let name = "sealedpush_gateway_http_requests_total"
            let (notifications, device) = ("/v1/apps/{appId}/notifications", "/v1/apps/{appId}/devices/{deviceId}")
            #expect(Self.sum(name, labels: ["route": notifications, "method": "POST", "status": "202"], in: text) == 3)
            #expect(Self.sum(name, labels: ["route": notifications, "method": "POST", "status": "401"], in: text) == 1)
            #expect(Self.sum(name, labels: ["route": device, "method": "PUT"], in: text) == 2)
            #expect(Self.sum(name, labels: ["route": device, "method": "GET", "status": "200"], in: text) == 1)
            #expect(Self.sum(name, labels: ["route": "NotFound", "method": "GET", "status": "404"], in: text) == 1)
            #expect(Self.sum(name, labels: ["route": "NotFound", "method": "other", "status": "405"], in: text) == 1)
            // The 9 answers before this scrape (the scrape itself is counted once it is answered).
            #expect(Self.sum(name, in: text) == 9, "\(text.split(separator: "\n").filter { $0.hasPrefix(name) })")
            #expect(Self.sum("sealedpush_gateway_http_request_seconds_count", in: text) == 9)
            // No id of an app or a device in a label.
            for line in text.split(separator: "\n") where line.hasPrefix("sealedpush_gateway_http_") {
                #expect(!line.contains("app1") && !line.contains("\"a\"") && !line.contains("devices/b"), "\(line)")
            }
        }
    }

    /// The value of an unlabelled sample in Prometheus text, or nil.
    static func value(_ name: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0] == name { return Double(parts[1]) }
        }
        return nil
    }

    /// The sum of the samples of family `name` (labelled or not) in Prometheus text whose labels include every
    /// `labels` pair; 0 when it has none.
    static func sum(_ name: String, labels: [String: String] = [:], in text: String) -> Double {
        var total = 0.0
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            guard parts.count == 2 else { continue }
            let series = String(parts[0])
            guard series == name || series.hasPrefix(name + "{") else { continue }
            if labels.allSatisfy({ series.contains("\($0.key)=\"\($0.value)\"") }) { total += Double(parts[1]) ?? 0 }
        }
        return total
    }

    @Test(arguments: Backend.available)
    func plaintextNeverReachesTheDatabaseOrTheLogs(_ backend: Backend) async throws {
        let marker = "PLAINTEXT-MARKER-\(UUID().uuidString)"
        let server = try await GatewayTestServer.start(backend)
        do {
            let key = server.keys["app1"]!
            try await server.registerDevice("marker-device")
            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key,
                json: ["devices": ["marker-device"], "content": ["title": marker, "body": marker, "data": ["m": marker]]])
            #expect(sent.status == 202)
            // Refused requests must not leak it either (error messages, logs).
            let refused = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key,
                json: ["devices": ["marker-device"], "content": ["body": marker, "badge": marker]])
            #expect(refused.status == 422)
            #expect(!refused.text.contains(marker))
            let big = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key,
                json: ["devices": ["marker-device"], "content": ["body": marker + String(repeating: ".", count: 3_000)]])
            #expect(big.status == 422)
            #expect(!big.text.contains(marker))

            let raw = try await server.rawDatabase()
            #expect(!raw.isEmpty)
            // The scan reads the right bytes: the device id, stored in clear, is found.
            #expect(raw.contains { $0.bytes.contains(bytes: Array("marker-device".utf8)) })
            for (name, bytes) in raw {
                #expect(!bytes.contains(bytes: Array(marker.utf8)), "the marker is in \(name)")
            }
            #expect(server.backend == .postgres || raw.contains { $0.name == "gateway.sqlite-wal" })
            #expect(!server.logs.text.isEmpty)
            #expect(!server.logs.text.contains(marker))
            try await server.shutDown()
            // After shutdown (the WAL checkpointed or not), the files still hold no marker.
            for (name, bytes) in try await server.rawDatabase() {
                #expect(!bytes.contains(bytes: Array(marker.utf8)), "the marker is in \(name) after shutdown")
            }
            #expect(!server.logs.text.contains(marker))
            try await server.cleanUp()
        } catch {
            try? await server.stop()
            throw error
        }
    }
}
