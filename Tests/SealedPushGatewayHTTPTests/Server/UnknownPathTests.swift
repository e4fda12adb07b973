import Foundation
import Testing

/// The `404` for a path the API does not have names every path of `Specs/gateway-api.yaml` (an outside audit found
/// the badge, receipts and update paths left out).
@Suite("Gateway HTTP: unknown paths")
struct UnknownPathTests {
    @Test func notFoundNamesEveryPathOfTheContract() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let answer = try await server.client.send("GET", "/admin")
            #expect(answer.status == 404 && answer.json["code"] as? String == "notFound")
            let message = answer.json["message"] as? String ?? ""
            for path in [
                "/v1/apps/{appId}/devices/{deviceId}", "/v1/apps/{appId}/users/{userId}", "/v1/apps/{appId}/notifications",
                "{notificationId}", "/update", "/v1/apps/{appId}/badge", "/v1/apps/{appId}/receipts", "/healthz", "/metrics",
            ] {
                #expect(message.contains(path), "\(path) missing from: \(message)")
            }
        }
    }
}
