import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// Register → send → status over real HTTP; the queued body opened by the device's own code (SealedPushClient).
@Suite("Gateway HTTP: devices, send, status", .serialized)
struct SendAndStatusTests {
    @Test(arguments: Backend.available)
    func registerSendStatusAndOpen(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
        let key = server.keys["app1"]!

        let ring = DeviceKeyRing.generate(now: UInt64(Date().timeIntervalSince1970))
        let body = GatewayTestServer.deviceBody(ring.registration())
        let created = try await server.client.send("PUT", "/v1/apps/app1/devices/phone-1", key: key, json: body)
        #expect(created.status == 201)
        #expect(created.json["keyId"] as? String == ring.registration().keyId)
        #expect(created.json["apnsToken"] as? String == "abababab…")  // never echoed whole
        let updated = try await server.client.send("PUT", "/v1/apps/app1/devices/phone-1", key: key, json: body)
        #expect(updated.status == 200)
        let read = try await server.client.send("GET", "/v1/apps/app1/devices/phone-1", key: key)
        #expect(read.status == 200)
        #expect(read.json["environment"] as? String == "sandbox")

        let content: [String: Any] = ["title": "Lunch", "body": "Table for two at noon", "badge": 3, "data": ["order": 42]]
        let sent = try await server.client.send(
            "POST", "/v1/apps/app1/notifications", key: key,
            json: ["devices": ["phone-1"], "content": content, "ttl": 600, "priority": 5])
        #expect(sent.status == 202)
        let id = try #require(sent.json["id"] as? String)
        #expect(id.dropFirst(14).first == "7", "\(id): the gateway's ids are time-ordered (UUID version 7)")
        #expect(sent.json["devices"] as? Int == 1)
        #expect(sent.header("Location") == "/v1/apps/app1/notifications/\(id)")
        #expect(sent.header("Idempotent-Replayed") == nil)

        let status = try await server.client.send("GET", "/v1/apps/app1/notifications/\(id)", key: key)
        #expect(status.status == 200)
        #expect(status.json["priority"] as? Int == 5)
        #expect(status.json["collapseId"] as? String == id)  // the default collapse id is the notification id
        let deliveries = try #require(status.json["devices"] as? [[String: Any]])
        #expect(deliveries.count == 1)
        #expect(deliveries.first?["deviceId"] as? String == "phone-1")
        #expect(deliveries.first?["state"] as? String == "queued")
        #expect(deliveries.first?["attempts"] as? Int == 0)

        // The job the gateway queued is the device's content, sealed to its key by the app's identity.
        let jobs = try await server.store.claim(owner: "test", limit: 10, leaseDuration: .seconds(60), now: Date())
        #expect(jobs.count == 1)
        let job = try #require(jobs.first)
        #expect(job.notificationID.uuidString.lowercased() == id)
        #expect(job.apnsToken == String(repeating: "ab", count: 32))
        #expect(job.priority == 5)
        let opened = try server.open(job.body.bytes, with: ring)
        #expect(opened.title == "Lunch")
        #expect(opened.body == "Table for two at noon")
        #expect(opened.badge == 3)
        #expect(opened.data == .object(["order": .number(42)]))
        // Another app's identity did not seal it: the device refuses it under app2's server key.
        #expect(throws: SealedPushError.self) { try server.open(job.body.bytes, with: ring, app: "app2") }

        // A claimed job is still reported queued.
        let claimed = try await server.client.send("GET", "/v1/apps/app1/notifications/\(id)", key: key)
        #expect((claimed.json["devices"] as? [[String: Any]])?.first?["state"] as? String == "queued")
        #expect((claimed.json["devices"] as? [[String: Any]])?.first?["attempts"] as? Int == 1)
        }
    }

    /// A stream of sends reads its app and its device from the store at most about once a second each (the device
    /// once in ten seconds), not once a send.
    @Test(arguments: Backend.available)
    func sendsReadTheirAppAndDeviceOnceASecond(_ backend: Backend) async throws {
        let appReads = ReadCounter()
        let deviceReads = ReadCounter()
        try await GatewayTestServer.with(
            backend,
            wrapStore: {
                HookedGatewayStore(inner: $0, beforeApp: appReads.read, beforeDevices: { _ in deviceReads.read("d1") })
            }
        ) { server in
            try await server.registerDevice("d1")
            appReads.start()
            deviceReads.start()
            for _ in 0..<30 {
                let sent = try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: server.keys["app1"]!,
                    json: ["devices": ["d1"], "content": ["body": "hi"]])
                #expect(sent.status == 202)
            }
            appReads.expectAboutOnceASecond("30 sends (the app)")
            deviceReads.expectAboutOnceASecond("30 sends (the device)")
        }
    }

    /// A device this node re-registers is sealed to under its new key by the very next send, though the send before
    /// it read the old registration a moment ago (the devices a node keeps are dropped when it changes them). So is a
    /// device registered again through another node (straight into the shared store: this node is not told): the
    /// enqueue finds the key changed, and the send reads the device again and seals anew — before stop 32 it was
    /// sealed to under its old key for up to a second, notifications it could not open. A device this node removes
    /// is refused at once, as before.
    @Test(arguments: Backend.available)
    func reRegistrationReachesTheNextSendAtOnce(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            func send(_ text: String) async throws -> HTTPExchange {
                try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: key,
                    json: ["devices": ["phone"], "content": ["body": text]])
            }
            let old = try await server.registerDevice("phone")
            #expect(try await send("one").status == 202)
            let new = try await server.registerDevice("phone")
            #expect(try await send("two").status == 202)
            let elsewhere = DeviceKeyRing.generate(now: UInt64(Date().timeIntervalSince1970))
            _ = try await server.store.putDevice(
                appID: "app1", deviceID: "phone", apnsToken: GatewayTestServer.token(for: "phone"), environment: .sandbox,
                registration: elsewhere.registration(), userID: nil, now: Date())
            #expect(try await send("three").status == 202)
            let jobs = try await server.store.claim(owner: "t", limit: 10, leaseDuration: .seconds(60), now: Date())
            #expect(jobs.count == 3)
            #expect(jobs.compactMap { try? server.open($0.body.bytes, with: old).body } == ["one"])
            #expect(jobs.compactMap { try? server.open($0.body.bytes, with: new).body } == ["two"])
            #expect(jobs.compactMap { try? server.open($0.body.bytes, with: elsewhere).body } == ["three"])

            #expect(try await server.client.send("DELETE", "/v1/apps/app1/devices/phone", key: key).status == 204)
            let refused = try await send("three")
            #expect(refused.status == 422)
            #expect(refused.json["code"] as? String == "unknownDevice")
        }
    }

    @Test(arguments: Backend.available)
    func lastRegistrationIsSealedTo(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
        let key = server.keys["app1"]!
        let old = try await server.registerDevice("phone")
        let new = try await server.registerDevice("phone")
        let sent = try await server.client.send(
            "POST", "/v1/apps/app1/notifications", key: key, json: ["devices": ["phone"], "content": ["body": "hi"]])
        #expect(sent.status == 202)
        let job = try #require(try await server.store.claim(owner: "t", limit: 1, leaseDuration: .seconds(60), now: Date()).first)
        #expect(try server.open(job.body.bytes, with: new).body == "hi")
        #expect(throws: SealedPushError.self) { try server.open(job.body.bytes, with: old) }
        }
    }

    /// Regression (issue 17, point 7): a reused Idempotency-Key with a different body answered `202` with the first
    /// id and silently dropped the second notification. Now `422 idempotencyKeyReused`; the same bytes replay.
    @Test(arguments: Backend.available)
    func idempotencyKeyWithAnotherBodyIs422(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("a")
            try await server.registerDevice("b")
            let path = "/v1/apps/app1/notifications"
            let lunch = Data(#"{"devices":["a"],"content":{"body":"Lunch at 1?"}}"#.utf8)
            let dinner = Data(#"{"devices":["a","b"],"content":{"body":"Dinner at 8?"}}"#.utf8)
            let first = try await server.client.send("POST", path, key: key, body: lunch, headers: ["Idempotency-Key": "k-1"])
            #expect(first.status == 202)
            let reused = try await server.client.send("POST", path, key: key, body: dinner, headers: ["Idempotency-Key": "k-1"])
            #expect(reused.status == 422, "\(reused.text)")
            #expect(reused.json["code"] as? String == "idempotencyKeyReused")
            #expect(reused.json["field"] as? String == "header:Idempotency-Key")
            #expect((reused.json["message"] as? String)?.contains(first.json["id"] as? String ?? "?") == true)
            #expect(!reused.text.contains("Dinner"))  // never content in an error
            // The same JSON is a retry, whatever its member order and spacing (the digest is over canonical JSON).
            let reordered = Data(#"{ "content": {"body": "Lunch at 1?"}, "devices": ["a"] }"#.utf8)
            let retry = try await server.client.send("POST", path, key: key, body: reordered, headers: ["Idempotency-Key": "k-1"])
            #expect(retry.status == 202)
            #expect(retry.json["id"] as? String == first.json["id"] as? String)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(try await server.store.queueDepth().total == 1)
            // Another key for the other body sends it.
            let sent = try await server.client.send("POST", path, key: key, body: dinner, headers: ["Idempotency-Key": "k-2"])
            #expect(sent.status == 202)
            #expect(try await server.store.queueDepth().total == 3)
        }
    }

    @Test(arguments: Backend.available)
    func idempotencyKeyReplaysWithoutNewJobs(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
        let key = server.keys["app1"]!
        try await server.registerDevice("a")
        try await server.registerDevice("b")
        let request: [String: Any] = ["devices": ["a", "b"], "content": ["body": "once"]]
        let first = try await server.client.send(
            "POST", "/v1/apps/app1/notifications", key: key, json: request, headers: ["Idempotency-Key": "order-77"])
        let again = try await server.client.send(
            "POST", "/v1/apps/app1/notifications", key: key, json: request, headers: ["Idempotency-Key": "order-77"])
        #expect(first.status == 202)
        #expect(again.status == 202)
        #expect(again.json["id"] as? String == first.json["id"] as? String)
        #expect(again.json["devices"] as? Int == 2)
        #expect(first.header("Idempotent-Replayed") == nil)
        #expect(again.header("Idempotent-Replayed") == "true")
        #expect(try await server.store.queueDepth().total == 2)  // no new jobs

        let other = try await server.client.send(
            "POST", "/v1/apps/app1/notifications", key: key, json: request, headers: ["Idempotency-Key": "order-78"])
        #expect(other.status == 202)
        #expect(other.json["id"] as? String != first.json["id"] as? String)
        #expect(try await server.store.queueDepth().total == 4)

        let bad = try await server.client.send(
            "POST", "/v1/apps/app1/notifications", key: key, json: request, headers: ["Idempotency-Key": "has space"])
        #expect(bad.status == 422)
        #expect(bad.json["field"] as? String == "header:Idempotency-Key")
        }
    }

    @Test(arguments: Backend.available)
    func deleteDevice(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
        let key = server.keys["app1"]!
        try await server.registerDevice("gone")
        let sent = try await server.client.send(
            "POST", "/v1/apps/app1/notifications", key: key, json: ["devices": ["gone"], "content": ["body": "x"]])
        let id = try #require(sent.json["id"] as? String)
        #expect(try await server.client.send("DELETE", "/v1/apps/app1/devices/gone", key: key).status == 204)
        #expect(try await server.client.send("DELETE", "/v1/apps/app1/devices/gone", key: key).status == 404)
        #expect(try await server.client.send("GET", "/v1/apps/app1/devices/gone", key: key).status == 404)
        let status = try await server.client.send("GET", "/v1/apps/app1/notifications/\(id)", key: key)
        #expect((status.json["devices"] as? [[String: Any]])?.first?["state"] as? String == "unregistered")
        let missing = try await server.client.send(
            "GET", "/v1/apps/app1/notifications/\(UUID().uuidString.lowercased())", key: key)
        #expect(missing.status == 404)
        #expect(missing.json["code"] as? String == "notFound")
        }
    }
}
