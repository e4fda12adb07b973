import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import Testing

/// A send through `users` that left out a device it cannot seal to lists it in its `202` (`skippedDevices`); the
/// notification keeps the list, so a retry with the same `Idempotency-Key` (answered as a replay) and the
/// notification's status list it as the first answer did — a client that lost the first answer still learns which
/// devices got nothing. Both were without the list before.
@Suite("Gateway HTTP: devices left out, in a replay and the status", .serialized)
struct SkippedDevicesReplayTests {
    @Test(arguments: Backend.available)
    func aReplayAndTheStatusListTheDevicesLeftOut(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("erin-phone", user: "erin")
            // A device of erin's whose key expired (registered before it did): no send can seal to it.
            let now = Date()
            let old = SealedPushClientRing.fresh().registration()
            _ = try await server.store.putDevice(
                appID: "app1", deviceID: "erin-old",
                address: .apns(token: GatewayTestServer.token(for: "erin-old"), environment: .sandbox),
                registration: DeviceRegistration(
                    publicKey: old.publicKey, keyId: old.keyId, createdAt: now.addingTimeInterval(-3 * 3_600),
                    expiresAt: now.addingTimeInterval(-3_600)),
                userID: "erin", now: now)

            func send(_ path: String, _ json: [String: Any], idempotencyKey: String) async throws -> HTTPExchange {
                try await server.client.send(
                    "POST", path, key: key, json: json, headers: ["Idempotency-Key": idempotencyKey])
            }
            func left(_ answer: HTTPExchange) -> [[String: String]] {
                (answer.json["skippedDevices"] as? [[String: Any]] ?? []).map { entry in
                    entry.compactMapValues { $0 as? String }
                }
            }
            let body: [String: Any] = ["users": ["erin"], "content": ["body": "hi"]]
            let first = try await send("/v1/apps/app1/notifications", body, idempotencyKey: "skip-send-1")
            #expect(first.status == 202, "\(first.text)")
            #expect(first.json["devices"] as? Int == 1)
            let skipped = left(first)
            #expect(skipped.map { $0["deviceId"] } == ["erin-old"], "\(first.text)")
            #expect(skipped.first?["code"] == "invalidKey")
            #expect(skipped.first?["message"]?.contains("erin-old") == true, "\(first.text)")
            #expect(skipped.first?["message"]?.contains("expired") == true, "\(first.text)")
            let id = try #require(first.json["id"] as? String)

            // The retry is answered as the replay it is, with the first answer's body, list included.
            let replay = try await send("/v1/apps/app1/notifications", body, idempotencyKey: "skip-send-1")
            #expect(replay.status == 202 && replay.header("Idempotent-Replayed") == "true", "\(replay.text)")
            #expect(replay.text == first.text)

            // The status lists them too, as the first answer did.
            let status = try await server.client.send("GET", "/v1/apps/app1/notifications/\(id)", key: key)
            #expect(status.status == 200, "\(status.text)")
            #expect(left(status) == skipped, "\(status.text)")
            #expect((status.json["devices"] as? [[String: Any]])?.compactMap { $0["deviceId"] as? String } == ["erin-phone"])

            // A badge to the user: the same for its replay and status.
            let badgeBody: [String: Any] = ["users": ["erin"], "count": 3]
            let badge = try await send("/v1/apps/app1/badge", badgeBody, idempotencyKey: "skip-badge-1")
            #expect(badge.status == 202 && left(badge) == skipped, "\(badge.text)")
            let badgeReplay = try await send("/v1/apps/app1/badge", badgeBody, idempotencyKey: "skip-badge-1")
            #expect(badgeReplay.header("Idempotent-Replayed") == "true" && badgeReplay.text == badge.text, "\(badgeReplay.text)")
            let badgeID = try #require(badge.json["id"] as? String)
            let badgeStatus = try await server.client.send("GET", "/v1/apps/app1/notifications/\(badgeID)", key: key)
            #expect(left(badgeStatus) == skipped, "\(badgeStatus.text)")

            // A send that left no device out says nothing of them, first, replayed or in its status.
            let direct: [String: Any] = ["devices": ["erin-phone"], "content": ["body": "d"]]
            let healthy = try await send("/v1/apps/app1/notifications", direct, idempotencyKey: "skip-send-2")
            #expect(healthy.status == 202 && healthy.json["skippedDevices"] == nil, "\(healthy.text)")
            let healthyReplay = try await send("/v1/apps/app1/notifications", direct, idempotencyKey: "skip-send-2")
            #expect(healthyReplay.header("Idempotent-Replayed") == "true" && healthyReplay.text == healthy.text)
            let healthyID = try #require(healthy.json["id"] as? String)
            let healthyStatus = try await server.client.send("GET", "/v1/apps/app1/notifications/\(healthyID)", key: key)
            #expect(healthyStatus.status == 200 && healthyStatus.json["skippedDevices"] == nil, "\(healthyStatus.text)")
        }
    }
}
