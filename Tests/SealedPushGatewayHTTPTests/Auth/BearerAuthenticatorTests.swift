import Foundation
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// Per-app bearer keys over real HTTP: 401 without or with an unknown key, 403 for another app's key with the same
/// answer whether or not the device or notification exists.
@Suite("Gateway HTTP: authentication", .serialized)
struct BearerAuthenticatorTests {
    @Test(arguments: Backend.available)
    func missingOrUnknownKeyIs401(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            try await server.registerDevice("d1")
            let path = "/v1/apps/app1/devices/d1"
            let none = try await server.client.send("GET", path)
            #expect(none.status == 401)
            #expect(none.json["code"] as? String == "unauthorized")
            #expect(none.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            // A well-formed key the gateway never issued.
            let unknown = try await server.client.send("GET", path, key: APIKey.generate().text)
            #expect(unknown.status == 401)
            // The right id with a wrong secret: the digest comparison refuses it.
            let real = server.keys["app1"]!
            let forged = String(real.dropLast()) + (real.last == "A" ? "B" : "A")
            #expect(try await server.client.send("GET", path, key: forged).status == 401)
            #expect(try await server.client.send("GET", path, key: "not-a-key").status == 401)
            let basic = try await server.client.send("GET", path, headers: ["Authorization": "Basic \(real)"])
            #expect(basic.status == 401)
            // And the real key works (the 401s are about the key, not the route).
            #expect(try await server.client.send("GET", path, key: real).status == 200)
        }
    }

    /// Issue 17 §11: a key past its expiry is refused like an unknown one; a key's use is recorded (once a minute).
    @Test(arguments: Backend.available)
    func expiredKeyIs401AndUseIsRecorded(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            try await server.registerDevice("d1")
            let path = "/v1/apps/app1/devices/d1"
            let expiring = APIKey.generate(), lasting = APIKey.generate()
            try await server.store.addAPIKey(
                StoredAPIKey(key: expiring, appID: "app1", label: "old", createdAt: Date().addingTimeInterval(-120),
                             expiresAt: Date().addingTimeInterval(-1)))
            try await server.store.addAPIKey(
                StoredAPIKey(key: lasting, appID: "app1", label: "new", expiresAt: Date().addingTimeInterval(3_600)))
            let expired = try await server.client.send("GET", path, key: expiring.text)
            #expect(expired.status == 401 && expired.json["code"] as? String == "unauthorized")
            #expect(try await server.client.send("GET", path, key: lasting.text).status == 200)
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while try await server.store.apiKey(id: lasting.id)?.lastUsedAt == nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let used = try #require(try await server.store.apiKey(id: lasting.id)?.lastUsedAt)
            #expect(abs(used.timeIntervalSinceNow) < 60)
            #expect(try await server.store.apiKey(id: expiring.id)?.lastUsedAt == nil)
        }
    }

    /// A backend's stream of requests reads its key from the store about once a second, not once a request; a key
    /// removed from the store is refused within that second; a wrong secret for a key just read is still refused.
    @Test(arguments: Backend.available)
    func storedKeysAreReadOnceASecondAndARevokedKeyIsRefusedWithinIt(_ backend: Backend) async throws {
        let reads = ReadCounter()
        try await GatewayTestServer.with(
            backend, wrapStore: { HookedGatewayStore(inner: $0, beforeAPIKey: reads.read) }
        ) { server in
            try await server.registerDevice("d1")
            let path = "/v1/apps/app1/devices/d1"
            let key = APIKey.generate()
            try await server.store.addAPIKey(StoredAPIKey(key: key, appID: "app1", label: "revoked soon"))
            reads.start()
            for _ in 0..<40 { #expect(try await server.client.send("GET", path, key: key.text).status == 200) }
            reads.expectAboutOnceASecond("40 requests")
            // The right id with a wrong secret, while the key is kept: refused by the digest comparison.
            let forged = String(key.text.dropLast()) + (key.text.last == "A" ? "B" : "A")
            #expect(try await server.client.send("GET", path, key: forged).status == 401)

            #expect(try await server.store.removeAPIKey(id: key.id))
            try await Task.sleep(for: .milliseconds(1_100))
            let revoked = try await server.client.send("GET", path, key: key.text)
            #expect(revoked.status == 401 && revoked.json["code"] as? String == "unauthorized")
        }
    }

    @Test(arguments: Backend.available)
    func otherAppsKeyIs403WithoutRevealingExistence(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key1 = server.keys["app1"]!
            let key2 = server.keys["app2"]!
            try await server.registerDevice("exists")
            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key1, json: ["devices": ["exists"], "content": ["body": "x"]])
            let id = try #require(sent.json["id"] as? String)

            let existing = try await server.client.send("GET", "/v1/apps/app1/devices/exists", key: key2)
            let absent = try await server.client.send("GET", "/v1/apps/app1/devices/absent", key: key2)
            #expect(existing.status == 403)
            #expect(absent.status == 403)
            #expect(existing.body == absent.body)
            #expect(existing.json["code"] as? String == "forbidden")

            let deleteExisting = try await server.client.send("DELETE", "/v1/apps/app1/devices/exists", key: key2)
            let deleteAbsent = try await server.client.send("DELETE", "/v1/apps/app1/devices/absent", key: key2)
            #expect(deleteExisting.status == 403)
            #expect(deleteExisting.body == deleteAbsent.body)

            let statusExisting = try await server.client.send("GET", "/v1/apps/app1/notifications/\(id)", key: key2)
            let statusAbsent = try await server.client.send(
                "GET", "/v1/apps/app1/notifications/\(UUID().uuidString.lowercased())", key: key2)
            #expect(statusExisting.status == 403)
            #expect(statusExisting.body == statusAbsent.body)

            let send = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key2, json: ["devices": ["exists"], "content": ["body": "x"]])
            #expect(send.status == 403)
            let put = try await server.client.send(
                "PUT", "/v1/apps/app1/devices/exists", key: key2,
                json: GatewayTestServer.deviceBody(
                    SealedPushClientRing.fresh().registration()))
            #expect(put.status == 403)

            // Nothing changed in app1: the device is still there, one job only.
            #expect(try await server.client.send("GET", "/v1/apps/app1/devices/exists", key: key1).status == 200)
            #expect(try await server.store.queueDepth().total == 1)
            // A key of app2 for its own app, on a device only app1 has: 404, as for any absent device.
            #expect(try await server.client.send("GET", "/v1/apps/app2/devices/exists", key: key2).status == 404)
        }
    }
}
