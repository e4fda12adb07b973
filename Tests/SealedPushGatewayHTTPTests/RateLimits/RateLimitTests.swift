import Foundation
import SealedPushGateway
import SealedPushGatewayHTTP
import Testing

/// Per-app rate limits over HTTP (issue 17 §12): one app over its limit gets `429 rateLimited` with `Retry-After`,
/// counted in the metrics, while another app's sends go through.
@Suite("Gateway HTTP: rate limits", .serialized)
struct RateLimitTests {
    @Test func oneAppOverItsLimitDoesNotStopAnother() async throws {
        let limits = RateLimits(
            defaults: .init(), apps: ["app1": .init(sendsPerSecond: 0.2, sendBurst: 2, devicesPerSecond: 100, deviceBurst: 100)])
        try await GatewayTestServer.with(.sqlite, rateLimits: limits) { server in
            try await server.registerDevice("phone")
            try await server.registerDevice("tablet", app: "app2")
            let send: (String, String, String) async throws -> HTTPExchange = { app, device, key in
                try await server.client.send(
                    "POST", "/v1/apps/\(app)/notifications", key: server.keys[app]!,
                    json: ["devices": [device], "content": ["body": "rate \(key)"]], headers: ["Idempotency-Key": key])
            }
            #expect(try await send("app1", "phone", "a").status == 202)
            #expect(try await send("app1", "phone", "b").status == 202)
            let refused = try await send("app1", "phone", "c")
            #expect(refused.status == 429)
            #expect(refused.json["code"] as? String == "rateLimited")
            #expect(Int(refused.header("Retry-After") ?? "") ?? 0 >= 1)
            #expect((refused.json["message"] as? String)?.contains("app1") == true)
            // The other app is not held back by the first.
            for index in 0..<10 { #expect(try await send("app2", "tablet", "t\(index)").status == 202) }
            let metrics = try await server.client.send("GET", "/metrics", key: nil)
            #expect(metrics.text.contains(#"sealedpush_gateway_rate_limited_total{app="app1",limit="sends"} 1"#), "\(metrics.text)")
            // The refused request queued nothing: app1 has its two notifications only.
            let jobs = try await server.store.claim(owner: "t", limit: 100, leaseDuration: .seconds(60), now: Date())
            #expect(jobs.filter { $0.appID == "app1" }.count == 2)
            #expect(jobs.filter { $0.appID == "app2" }.count == 10)
        }
    }

    @Test func rateLimitSettingsAreCheckedAndMisspellingsNamed() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func load(_ json: String) -> String {
            let path = directory.appendingPathComponent("gateway.json").path
            _ = FileManager.default.createFile(atPath: path, contents: Data(json.utf8))
            do {
                let configuration = try GatewayConfiguration.load(path: path, environment: [:])
                try configuration.validate()
                return "ok \(configuration.rateLimits?.limit(for: "chat").sendsPerSecond ?? 0)"
            } catch let error as GatewayConfigurationError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(load(#"{"database":"sqlite:x","rateLimits":{"sendsPerSecond":5,"apps":{"chat":{"sendsPerSecond":2}}}}"#) == "ok 2.0")
        #expect(load(#"{"database":"sqlite:x","rateLimits":{"apps":{"chat":{"sendsPerSec":2}}}}"#)
            .contains(#"did you mean "rateLimits.apps.chat.sendsPerSecond""#))
        #expect(load(#"{"database":"sqlite:x","rateLimits":{"sendPerSecond":2}}"#).contains(#""rateLimits.sendsPerSecond""#))
        #expect(load(#"{"database":"sqlite:x","rateLimits":{"sendsPerSecond":0}}"#).contains("rateLimits.sendsPerSecond"))
        #expect(load(#"{"database":"sqlite:x","rateLimits":{"deviceBurst":10}}"#).contains("needs rateLimits.devicesPerSecond"))
    }
}
