import Foundation
import SealedPushClient
import SealedPushCore
import Testing

/// Refusals an outside audit found answered otherwise than `Specs/gateway-api.yaml` says: a content's own `control` or
/// `notification-id` is `422 invalidArgument` naming it whatever its value (not `malformedContent` with advice on
/// fixing it), and a registration's times follow the contract's Timestamp form, refused with messages that state the
/// limit in the fields' own terms.
@Suite("Gateway HTTP: refusal codes and messages")
struct RefusalMessageTests {
    @Test func contentControlOrNotificationIdIsInvalidArgumentWhateverItsValue() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            try await server.registerDevice("phone")
            let cases: [(content: [String: Any], field: String)] = [
                (["control": ["action": "remove"]], "content.control"),
                (["control": 5], "content.control"),
                (["notification-id": 5], "content.notification-id"),
                (["title": "x", "control": ["action": "badge", "count": 1]], "content.control"),
                (["body": "x", "control": ["action": "remove", "ids": ["a"]]], "content.control"),
            ]
            for (content, field) in cases {
                for path in ["/v1/apps/app1/notifications"] {
                    let answer = try await server.client.send(
                        "POST", path, key: server.keys["app1"], json: ["devices": ["phone"], "content": content])
                    #expect(answer.status == 422, "\(content): \(answer.text)")
                    #expect(answer.json["code"] as? String == "invalidArgument", "\(content): \(answer.text)")
                    #expect(answer.json["field"] as? String == field, "\(content): \(answer.text)")
                }
            }
        }
    }

    @Test func registrationTimesFollowTheContractAndRefusalsStateTheLimit() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let ring = DeviceKeyRing.generate(now: UInt64(Date().timeIntervalSince1970))
            let registration = ring.registration()
            func put(_ createdAt: String, expiresAt: String? = nil) async throws -> HTTPExchange {
                var body = GatewayTestServer.deviceBody(registration, token: GatewayTestServer.token(for: "devR"))
                var record = body["registration"] as! [String: Any]
                record["createdAt"] = createdAt
                record["expiresAt"] = expiresAt
                body["registration"] = record
                return try await server.client.send("PUT", "/v1/apps/app1/devices/devR", key: server.keys["app1"], json: body)
            }
            func iso(_ offset: TimeInterval) -> String { DeviceRegistration.formatDate(Date().addingTimeInterval(offset)) }

            let ancient = try await put("0000-01-01T00:00:00Z")
            #expect(ancient.status == 422 && ancient.json["field"] as? String == "registration.createdAt")
            let ancientMessage = ancient.json["message"] as? String ?? ""
            #expect(ancientMessage.contains("1970") && !ancientMessage.contains("unavailable"), "\(ancientMessage)")

            let ahead = try await put(iso(7200))
            #expect(ahead.status == 422 && ahead.json["code"] as? String == "invalidArgument")
            #expect(ahead.json["field"] as? String == "registration.createdAt")
            let aheadMessage = ahead.json["message"] as? String ?? ""
            #expect(aheadMessage.contains("ahead") && aheadMessage.contains("(at most 600)"), "\(aheadMessage)")

            let past = iso(-7200)
            let equal = try await put(past, expiresAt: past)
            #expect(equal.status == 422 && equal.json["field"] as? String == "registration.expiresAt")
            let equalMessage = equal.json["message"] as? String ?? ""
            #expect(equalMessage.contains(past) && !equalMessage.contains("before it is created"), "\(equalMessage)")

            for form in ["2026-11-30T04:00:00.123Z", "2026-11-30T04:00:00+01:00", "2026-11-30 04:00:00Z"] {
                let answer = try await put(form)
                #expect(answer.status == 422, "\(form): \(answer.text)")
                #expect(answer.json["field"] as? String == "registration.createdAt", "\(form): \(answer.text)")
                #expect((answer.json["message"] as? String)?.contains("YYYY-MM-DDTHH:MM:SSZ") == true, "\(form): \(answer.text)")
            }
            #expect(try await put(iso(-60)).status == 201)
        }
    }
}
