import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import SealedPushServer
import Testing

/// Devices a send cannot seal to: a key id not in its text form (16 lowercase hex digits), a key that expired, a
/// low-order key. Registration refuses what it can tell (`422 invalidKey` naming the field); a send to a user leaves
/// out a device of that user it cannot seal to and says so (`SendAccepted.skippedDevices`), reaching the user's other
/// devices; a send naming such a device directly is refused naming it where the request named it. Nothing of this
/// is ever `503`: the database is fine.
@Suite("Gateway HTTP: devices that cannot be sealed to", .serialized)
struct UnsendableDeviceTests {
    /// A low-order X25519 point (u = 0) in the key text form: canonical, so it parses, but every shared value with it
    /// is zero.
    static let lowOrderKey = "SPK1:" + String(repeating: "A", count: 43)

    static func hex(_ text: String) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// `Specs/gateway-api.yaml` Registration.keyId: `pattern: "^[0-9a-f]{16}$"`. An upper-case key id is refused
    /// (`422 invalidKey`, field `registration.keyId`), not accepted to make every later send to the device, and to
    /// its user, a `503`.
    @Test(arguments: Backend.available)
    func anUpperCaseKeyIdIsRefusedAtRegistration(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("carol-ipad", user: "carol")
            let ring = SealedPushClientRing.fresh()
            var registration = ring.registration()
            registration.keyId = registration.keyId.uppercased()
            #expect(registration.keyId != ring.registration().keyId)  // it has letters (else the test proves nothing)
            var body = GatewayTestServer.deviceBody(registration, token: GatewayTestServer.token(for: "carol-phone"))
            body["userId"] = "carol"
            let refused = try await server.client.send("PUT", "/v1/apps/app1/devices/carol-phone", key: key, json: body)
            #expect(refused.status == 422, "\(refused.text)")
            #expect(refused.json["code"] as? String == "invalidKey")
            #expect(refused.json["field"] as? String == "registration.keyId")
            #expect((refused.json["message"] as? String)?.contains("16 lowercase hex digits") == true, "\(refused.text)")
            #expect(try await server.client.send("GET", "/v1/apps/app1/devices/carol-phone", key: key).status == 404)

            // The same registration in its text form is taken; the Device answer's keyId matches the contract.
            var lower = GatewayTestServer.deviceBody(ring.registration(), token: GatewayTestServer.token(for: "carol-phone"))
            lower["userId"] = "carol"
            let taken = try await server.client.send("PUT", "/v1/apps/app1/devices/carol-phone", key: key, json: lower)
            #expect(taken.status == 201, "\(taken.text)")
            #expect((taken.json["keyId"] as? String).map(Self.hex) == true, "\(taken.text)")

            // Sends and badges to the user reach both devices.
            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["users": ["carol"], "content": ["body": "hi"]])
            #expect(sent.status == 202, "\(sent.text)")
            #expect(sent.json["devices"] as? Int == 2)
            let badge = try await server.client.send(
                "POST", "/v1/apps/app1/badge", key: key, json: ["users": ["carol"], "count": 2])
            #expect(badge.status == 202, "\(badge.text)")
            #expect(badge.json["devices"] as? Int == 2)
        }
    }

    /// A registration with an upper-case key id written to the store directly (as gateways before such key ids were
    /// refused wrote them; rows stored then are lower-cased by migration, `KeyIDMigrationTests`) is kept in
    /// lowercase. Sends to the device and to its user are `202` and seal to its key; they were `503` with
    /// `Retry-After` forever.
    @Test(arguments: Backend.available)
    func aKeyIdStoredInUpperCaseStillReceives(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            let ipad = try await server.registerDevice("carol-ipad", user: "carol")
            let phone = SealedPushClientRing.fresh()
            var registration = phone.registration()
            registration.keyId = registration.keyId.uppercased()
            _ = try await server.store.putDevice(
                appID: "app1", deviceID: "carol-phone",
                address: .apns(token: GatewayTestServer.token(for: "carol-phone"), environment: .sandbox),
                registration: registration, userID: "carol", now: Date())

            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["users": ["carol"], "content": ["body": "hi carol"]])
            #expect(sent.status == 202, "\(sent.text)")
            #expect(sent.json["devices"] as? Int == 2)
            let jobs = try await server.store.claim(owner: "t", limit: 10, leaseDuration: .seconds(60), now: Date())
            #expect(jobs.count == 2)
            let first = try #require(jobs.first { $0.deviceID == "carol-phone" })
            #expect(try server.open(first.body.bytes, with: phone).body == "hi carol")
            let other = try #require(jobs.first { $0.deviceID == "carol-ipad" })
            #expect(try server.open(other.body.bytes, with: ipad).body == "hi carol")

            let direct = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["devices": ["carol-phone"], "content": ["body": "d"]])
            #expect(direct.status == 202, "\(direct.text)")
            let badge = try await server.client.send(
                "POST", "/v1/apps/app1/badge", key: key, json: ["users": ["carol"], "count": 2])
            #expect(badge.status == 202, "\(badge.text)")

            // The Device answer shows the key id as the contract's pattern has it.
            let read = try await server.client.send("GET", "/v1/apps/app1/devices/carol-phone", key: key)
            #expect((read.json["keyId"] as? String) == phone.registration().keyId, "\(read.text)")
        }
    }

    /// A device registered again (through another node) between each sealing and its commit: the send reads and
    /// seals again, and after its last attempt answers `409 deviceKeyChanged` naming the device where the request
    /// named it — never `503`, which says the database failed. One re-registration costs only a new attempt.
    @Test(arguments: Backend.available)
    func aDeviceRegisteringDuringEverySealingIsAConflictNamingIt(_ backend: Backend) async throws {
        let racing = RegisteringAgainStore.Target()
        try await GatewayTestServer.with(backend, wrapStore: { RegisteringAgainStore(inner: $0, target: racing) }) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("dana-phone", user: "dana")
            try await server.registerDevice("dana-tablet", user: "dana")

            racing.set(deviceID: "dana-tablet", times: .max)
            let refused = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["users": ["dana"], "content": ["body": "x"]])
            #expect(refused.status == 409, "\(refused.text)")
            #expect(refused.json["code"] as? String == "deviceKeyChanged")
            #expect(refused.json["field"] as? String == "users[0]")
            #expect((refused.json["message"] as? String)?.contains("dana-tablet") == true, "\(refused.text)")
            #expect(refused.header("Retry-After") == nil)
            let named = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key,
                json: ["devices": ["dana-phone", "dana-tablet"], "content": ["body": "x"]])
            #expect(named.status == 409, "\(named.text)")
            #expect(named.json["field"] as? String == "devices[1]")
            #expect(try await server.store.queueDepth().total == 0)

            // Registered again once: the next attempt seals to the new key and the send goes through.
            racing.set(deviceID: "dana-tablet", times: 1)
            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["users": ["dana"], "content": ["body": "y"]])
            #expect(sent.status == 202, "\(sent.text)")
            #expect(sent.json["devices"] as? Int == 2)
        }
    }

    /// `Specs/envelope-v1.md` §7: registrations reject unusable public keys with `invalidKey`. A low-order key would
    /// have been accepted (`201`), every sealing to it then failing.
    @Test func aLowOrderKeyIsRefusedAtRegistration() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let keyID = try DevicePublicKey(text: Self.lowOrderKey).keyID.hex
            let body: [String: Any] = [
                "apnsToken": GatewayTestServer.token(for: "zero"), "environment": "sandbox",
                "registration": [
                    "version": 1, "publicKey": Self.lowOrderKey, "keyId": keyID,
                    "createdAt": DeviceRegistration.formatDate(Date()),
                ],
            ]
            let refused = try await server.client.send("PUT", "/v1/apps/app1/devices/zero", key: server.keys["app1"]!, json: body)
            #expect(refused.status == 422, "\(refused.text)")
            #expect(refused.json["code"] as? String == "invalidKey")
            #expect(refused.json["field"] as? String == "registration.publicKey")
            #expect(try await server.client.send("GET", "/v1/apps/app1/devices/zero", key: server.keys["app1"]!).status == 404)
        }
    }

    /// A user with one device whose key expired and one whose key is low-order (both registered before they could
    /// not be sealed to) and one healthy device: a send or badge to the user reaches the healthy one and says which
    /// it left out and why; naming a bad device directly is refused with its place in the request and its id; a
    /// user with no device left is `422 noDevices` saying why.
    @Test(arguments: Backend.available)
    func aUsersDeviceThatCannotBeSealedToIsSkippedAndNamed(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            let phone = try await server.registerDevice("erin-phone", user: "erin")
            let now = Date()
            let old = SealedPushClientRing.fresh().registration()
            func put(_ deviceID: String, user: String, _ registration: DeviceRegistration) async throws {
                _ = try await server.store.putDevice(
                    appID: "app1", deviceID: deviceID,
                    address: .apns(token: GatewayTestServer.token(for: deviceID), environment: .sandbox),
                    registration: registration, userID: user, now: now)
            }
            let expired = DeviceRegistration(
                publicKey: old.publicKey, keyId: old.keyId, createdAt: now.addingTimeInterval(-3 * 3_600),
                expiresAt: now.addingTimeInterval(-3_600))
            try await put("erin-old", user: "erin", expired)
            try await put(
                "erin-zero", user: "erin",
                DeviceRegistration(
                    publicKey: Self.lowOrderKey, keyId: try DevicePublicKey(text: Self.lowOrderKey).keyID.hex,
                    createdAt: now.addingTimeInterval(-60)))
            try await put("frank-old", user: "frank", expired)

            func skipped(_ answer: HTTPExchange) -> [String: [String: Any]] {
                let list = answer.json["skippedDevices"] as? [[String: Any]] ?? []
                return Dictionary(list.map { ($0["deviceId"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
            }
            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["users": ["erin"], "content": ["body": "x"]])
            #expect(sent.status == 202, "\(sent.text)")
            #expect(sent.json["devices"] as? Int == 1)
            let left = skipped(sent)
            #expect(Set(left.keys) == ["erin-old", "erin-zero"], "\(sent.text)")
            #expect(left["erin-old"]?["code"] as? String == "invalidKey")
            #expect((left["erin-old"]?["message"] as? String)?.contains("expired") == true, "\(sent.text)")
            #expect(left["erin-zero"]?["code"] as? String == "invalidKey")
            let id = try #require(sent.json["id"] as? String)
            let status = try await server.client.send("GET", "/v1/apps/app1/notifications/\(id)", key: key)
            #expect((status.json["devices"] as? [[String: Any]])?.compactMap { $0["deviceId"] as? String } == ["erin-phone"])
            let jobs = try await server.store.claim(owner: "t", limit: 10, leaseDuration: .seconds(60), now: Date())
            #expect(jobs.map(\.deviceID) == ["erin-phone"])
            if let job = jobs.first { #expect(try server.open(job.body.bytes, with: phone).body == "x") }

            let badge = try await server.client.send(
                "POST", "/v1/apps/app1/badge", key: key, json: ["users": ["erin"], "count": 1])
            #expect(badge.status == 202, "\(badge.text)")
            #expect(badge.json["devices"] as? Int == 1)
            #expect(Set(skipped(badge).keys) == ["erin-old", "erin-zero"], "\(badge.text)")

            // A healthy send says nothing of skipped devices.
            let healthy = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["devices": ["erin-phone"], "content": ["body": "y"]])
            #expect(healthy.status == 202)
            #expect(healthy.json["skippedDevices"] == nil, "\(healthy.text)")

            // Named directly: refused, at the place the request named it, with its id.
            let direct = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["devices": ["erin-old"], "content": ["body": "x"]])
            #expect(direct.status == 422, "\(direct.text)")
            #expect(direct.json["code"] as? String == "invalidKey")
            #expect(direct.json["field"] as? String == "devices[0]")
            #expect((direct.json["message"] as? String)?.contains("erin-old") == true, "\(direct.text)")
            let second = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key,
                json: ["devices": ["erin-phone", "erin-zero"], "users": ["erin"], "content": ["body": "x"]])
            #expect(second.status == 422, "\(second.text)")
            #expect(second.json["field"] as? String == "devices[1]")
            #expect((second.json["message"] as? String)?.contains("erin-zero") == true, "\(second.text)")

            // A user none of whose devices can be sealed to: nothing to send, and why.
            let none = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, json: ["users": ["frank"], "content": ["body": "x"]])
            #expect(none.status == 422, "\(none.text)")
            #expect(none.json["code"] as? String == "noDevices")
            #expect(none.json["field"] as? String == "users")
            #expect((none.json["message"] as? String)?.contains("frank-old") == true, "\(none.text)")
        }
    }
}
