import Foundation
import SealedPushCore
import Testing

/// `Specs/gateway-api.yaml` sendNotification: content is sealed with the `notification-id` (57 bytes canonical) the
/// gateway adds, so a send's own content can be at most 2,853 bytes canonical (2,910 in all), an update's at most
/// 2,779 (its `control` adds 74 more). A refusal (`422 contentTooLarge`) states the sender's own size as `needed` and
/// that budget as `limit`, and says what the gateway added.
@Suite("Gateway HTTP: the content budget", .serialized)
struct ContentBudgetTests {
    /// `{"body":"SSS…"}`, exactly `bytes` bytes in canonical form.
    static func content(_ bytes: Int) -> [String: Any] {
        ["body": String(repeating: "S", count: bytes - #"{"body":""}"#.utf8.count)]
    }

    @Test func aSendsContentHasTheBudgetTheContractStates() async throws {
        try await GatewayTestServer.with(.sqlite, maxBodyBytes: 262_144) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("d")
            func send(_ bytes: Int) async throws -> HTTPExchange {
                let json = try JSONSerialization.data(withJSONObject: Self.content(bytes))
                #expect(try NotificationContent(json: [UInt8](json)).canonicalJSON().count == bytes)
                return try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: key, json: ["devices": ["d"], "content": Self.content(bytes)])
            }
            let fits = try await send(2_853)
            #expect(fits.status == 202, "\(fits.text)")

            let over = try await send(2_854)
            #expect(over.status == 422, "\(over.text)")
            #expect(over.json["code"] as? String == "contentTooLarge")
            #expect(over.json["field"] as? String == "content")
            #expect(over.json["needed"] as? Int == 2_854, "\(over.text)")
            #expect(over.json["limit"] as? Int == 2_853, "\(over.text)")
            let message = over.json["message"] as? String ?? ""
            #expect(message.contains("content is 2854 bytes canonical"), "\(message)")
            #expect(message.contains("at most 2853"), "\(message)")
            #expect(message.contains("notification-id") && message.contains("2910"), "\(message)")
            #expect(!message.contains("SSSS"))

            // An update: its control takes 74 bytes more.
            let id = try #require(fits.json["id"] as? String)
            func update(_ bytes: Int) async throws -> HTTPExchange {
                try await server.client.send(
                    "POST", "/v1/apps/app1/notifications/\(id)/update", key: key, json: ["content": Self.content(bytes)])
            }
            let updated = try await update(2_779)
            #expect(updated.status == 202, "\(updated.text)")
            let overUpdate = try await update(2_780)
            #expect(overUpdate.status == 422, "\(overUpdate.text)")
            #expect(overUpdate.json["code"] as? String == "contentTooLarge")
            #expect(overUpdate.json["needed"] as? Int == 2_780, "\(overUpdate.text)")
            #expect(overUpdate.json["limit"] as? Int == 2_779, "\(overUpdate.text)")
            #expect((overUpdate.json["message"] as? String)?.contains("control") == true, "\(overUpdate.text)")
        }
    }
}
