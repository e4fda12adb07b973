import Foundation
import SealedPushGateway
import SealedPushGatewayHTTP
import Testing

/// A retry with an accepted request's `Idempotency-Key` is a no-op (`Specs/gateway-api.yaml` sendNotification): it
/// takes no token of the app's send limit, and it is answered as the replay it is even while the app is over its
/// limit (an outside audit found replays using up the burst, then refused with 429).
@Suite("Gateway HTTP: idempotent replays and the rate limits", .serialized)
struct ReplayRateLimitTests {
    @Test func replaysTakeNoTokenAndAreAnsweredOverTheLimit() async throws {
        // A burst of 3 that does not refill during the test.
        let limits = RateLimits(
            defaults: .init(), apps: ["app1": .init(sendsPerSecond: 0.001, sendBurst: 3, devicesPerSecond: 100, deviceBurst: 100)])
        try await GatewayTestServer.with(.sqlite, rateLimits: limits) { server in
            try await server.registerDevice("phone")
            let key = server.keys["app1"]!
            func send(_ idempotencyKey: String) async throws -> HTTPExchange {
                try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: key,
                    json: ["devices": ["phone"], "content": ["body": "rl"]], headers: ["Idempotency-Key": idempotencyKey])
            }
            func update(_ id: String, _ idempotencyKey: String) async throws -> HTTPExchange {
                try await server.client.send(
                    "POST", "/v1/apps/app1/notifications/\(id)/update", key: key,
                    json: ["content": ["body": "rl2"]], headers: ["Idempotency-Key": idempotencyKey])
            }
            let first = try await send("rl-1")  // token 1
            #expect(first.status == 202)
            let id = try #require(first.json["id"] as? String)
            for _ in 0..<3 {
                let replay = try await send("rl-1")
                #expect(replay.status == 202 && replay.header("Idempotent-Replayed") == "true")
                #expect(replay.json["id"] as? String == id)
            }
            let updated = try await update(id, "rl-u1")  // token 2
            #expect(updated.status == 202, "\(updated.text)")
            let updateID = try #require(updated.json["id"] as? String)
            #expect(try await update(id, "rl-u1").header("Idempotent-Replayed") == "true")
            #expect(try await send("rl-2").status == 202)  // token 3: the replays took none
            let over = try await send("rl-3")
            #expect(over.status == 429 && over.json["code"] as? String == "rateLimited")
            // Over the limit, the accepted requests' retries are still their replays.
            let replay = try await send("rl-1")
            #expect(replay.status == 202 && replay.header("Idempotent-Replayed") == "true", "\(replay.text)")
            let updateReplay = try await update(id, "rl-u1")
            #expect(updateReplay.status == 202 && updateReplay.json["id"] as? String == updateID, "\(updateReplay.text)")
            // Nothing more was queued: the two sends and the update.
            let jobs = try await server.store.claim(owner: "t", limit: 100, leaseDuration: .seconds(60), now: Date())
            #expect(jobs.count == 3)
        }
    }
}
