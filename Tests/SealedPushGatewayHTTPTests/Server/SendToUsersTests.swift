import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import Testing

/// Devices registered with a `userId`; a send naming users reaches each one's sendable devices (with those named
/// directly, no repeats), each sealed to its own key.
@Suite("Gateway HTTP: sending to users", .serialized)
struct SendToUsersTests {
    @Test(arguments: Backend.available)
    func usersExpandToTheirDevices(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            var rings: [String: DeviceKeyRing] = [:]
            rings["alice-phone"] = try await server.registerDevice("alice-phone", user: "alice")
            rings["alice-tablet"] = try await server.registerDevice("alice-tablet", user: "alice")
            rings["bob-phone"] = try await server.registerDevice("bob-phone", user: "bob")
            rings["kiosk"] = try await server.registerDevice("kiosk")
            try await server.registerDevice("carol-phone", app: "app2", user: "carol")

            let read = try await server.client.send("GET", "/v1/apps/app1/devices/alice-tablet", key: key)
            #expect(read.json["userId"] as? String == "alice")

            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key,
                json: ["users": ["alice", "carol"], "devices": ["kiosk", "alice-phone"], "content": ["body": "to users"]])
            #expect(sent.status == 202, "\(sent.text)")
            #expect(sent.json["devices"] as? Int == 3)  // kiosk, alice-phone (named twice, once), alice-tablet
            let id = try #require(sent.json["id"] as? String)
            let status = try await server.client.send("GET", "/v1/apps/app1/notifications/\(id)", key: key)
            let devices = (status.json["devices"] as? [[String: Any]] ?? []).compactMap { $0["deviceId"] as? String }
            #expect(Set(devices) == ["kiosk", "alice-phone", "alice-tablet"])
            let jobs = try await server.store.claim(owner: "t", limit: 10, leaseDuration: .seconds(60), now: Date())
            #expect(jobs.count == 3)
            for job in jobs { #expect(try server.open(job.body.bytes, with: rings[job.deviceID]!).body == "to users") }

            // A user whose devices are all unregistered, or who has none in this app: nothing to send to.
            #expect(try await server.store.markDeviceUnregistered(appID: "app1", deviceID: "bob-phone", reason: "Unregistered", at: Date()))
            for users in [["bob"], ["carol"], ["nobody"]] {
                let none = try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: key, json: ["users": users, "content": ["body": "x"]])
                #expect(none.status == 422)
                #expect(none.json["code"] as? String == "noDevices")
                #expect(none.json["field"] as? String == "users")
            }
            // Re-registering without a user removes the device from alice's set.
            try await server.registerDevice("alice-tablet")
            let again = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["users": ["alice"], "content": ["body": "y"]])
            #expect(again.json["devices"] as? Int == 1)

            // Deleting a user removes that user's devices in this app only; a second delete removes none.
            let deleted = try await server.client.send("DELETE", "/v1/apps/app1/users/alice", key: key)
            #expect(deleted.status == 200)
            #expect(deleted.json["devicesRemoved"] as? [String] == ["alice-phone"])
            #expect(try await server.client.send("GET", "/v1/apps/app1/devices/alice-phone", key: key).status == 404)
            #expect(try await server.client.send("GET", "/v1/apps/app1/devices/alice-tablet", key: key).status == 200)
            let again2 = try await server.client.send("DELETE", "/v1/apps/app1/users/alice", key: key)
            #expect(again2.status == 200)
            #expect(again2.json["devicesRemoved"] as? [String] == [])
            // Another app's key cannot act here; the app's own users stay.
            #expect(try await server.client.send("DELETE", "/v1/apps/app1/users/bob", key: server.keys["app2"]!).status == 403)
            #expect(try await server.client.send("DELETE", "/v1/apps/app2/users/carol", key: key).status == 403)
            #expect(try await server.store.device(appID: "app2", deviceID: "carol-phone") != nil)
            #expect(try await server.client.send("DELETE", "/v1/apps/app1/users/not%20valid", key: key).status == 422)
        }
    }

    @Test func malformedUsersNameTheField() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let key = server.keys["app1"]!
            let ring = SealedPushClientRing.fresh()
            var body = GatewayTestServer.deviceBody(ring.registration())
            body["userId"] = "not a valid id"
            let put = try await server.client.send("PUT", "/v1/apps/app1/devices/d1", key: key, json: body)
            #expect(put.status == 422)
            #expect(put.json["field"] as? String == "userId")
            let cases: [([String: Any], String)] = [
                (["users": ["ok", "ok"], "content": ["body": "x"]], "users[1]"),
                (["users": [], "content": ["body": "x"]], "users"),
                (["users": ["a b"], "content": ["body": "x"]], "users[0]"),
                (["content": ["body": "x"]], "devices"),
            ]
            for (json, field) in cases {
                let answer = try await server.client.send("POST", "/v1/apps/app1/notifications", key: key, json: json)
                #expect(answer.status == 422, "\(field): \(answer.text)")
                #expect(answer.json["field"] as? String == field, "\(answer.text)")
            }
        }
    }
}
