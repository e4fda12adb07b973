import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import Testing

/// What `POST …/notifications/{id}/update` may replace (`Specs/gateway-api.yaml` updateNotification,
/// `Specs/control-v1.md` §2): content, never a control message, and nothing of a notification once it was withdrawn —
/// neither the notification nor an update of it; and a retry with an accepted update's `Idempotency-Key` is its
/// replay, whatever happened since (an outside audit found all three answered otherwise).
@Suite("Gateway HTTP: what an update may replace", .serialized)
struct UpdateTargetTests {
    static let app = "/v1/apps/app1"

    /// Claims every queued job and ends each `sent`, as delivery would: the device got them.
    @discardableResult
    static func deliverAll(_ server: GatewayTestServer) async throws -> [ClaimedJob] {
        let jobs = try await server.store.claim(owner: "test", limit: 100, leaseDuration: .seconds(60), now: Date())
        for job in jobs {
            _ = try await server.store.finish(jobID: job.id, owner: "test", outcome: .sent(apnsID: UUID().uuidString), now: Date())
        }
        return jobs
    }

    static func update(_ server: GatewayTestServer, _ id: String, _ body: String, key: String? = nil) async throws -> HTTPExchange {
        try await server.client.send(
            "POST", "\(app)/notifications/\(id)/update", key: server.keys["app1"],
            json: ["content": ["body": body]], headers: key.map { ["Idempotency-Key": $0] } ?? [:])
    }

    @Test("after a withdrawal nothing of the notification can be updated; a removal or a badge never can", arguments: Backend.available)
    func withdrawnChainsAndControlMessagesAreRefused(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let ring = try await server.registerDevice("phone")
            let key = server.keys["app1"]!
            let sent = try await server.client.send(
                "POST", "\(Self.app)/notifications", key: key,
                json: ["devices": ["phone"], "content": ["title": "T", "body": "original"]])
            #expect(sent.status == 202)
            let id = try #require(sent.json["id"] as? String)
            try await Self.deliverAll(server)

            let first = try await Self.update(server, id, "updated")
            #expect(first.status == 202)
            let updateID = try #require(first.json["id"] as? String)
            try await Self.deliverAll(server)
            // An update of the update updates the same notification: the device replaces what it shows under the
            // original's id, so the original's withdrawal removes it too.
            let second = try await Self.update(server, updateID, "updated again")
            #expect(second.status == 202, "\(second.text)")
            let secondID = try #require(second.json["id"] as? String)
            let secondJobs = try await Self.deliverAll(server)
            let secondJob = try #require(secondJobs.first { $0.notificationID.uuidString.lowercased() == secondID })
            let opened = try server.open(secondJob.body.bytes, with: ring)
            #expect(opened.body == "updated again")
            #expect(opened.notificationID == id)
            #expect(opened.control == (try NotificationControl.update(id: id)))
            #expect(secondJob.collapseID == id)

            let withdrawn = try await server.client.send("DELETE", "\(Self.app)/notifications/\(id)", key: key)
            #expect(withdrawn.status == 200)
            let removalID = try #require(withdrawn.json["removalId"] as? String)
            let badge = try await server.client.send(
                "POST", "\(Self.app)/badge", key: key, json: ["devices": ["phone"], "count": 2])
            #expect(badge.status == 202)
            let badgeID = try #require(badge.json["id"] as? String)
            let controls = try await Self.deliverAll(server)  // the removal and the badge
            #expect(Set(controls.map { $0.notificationID.uuidString.lowercased() }) == [removalID, badgeID])

            // The withdrawn notification, its update and its update's update: 409 notificationWithdrawn.
            for target in [id, updateID, secondID] {
                let refused = try await Self.update(server, target, "resurrected")
                #expect(refused.status == 409, "update of \(target): \(refused.text)")
                #expect(refused.json["code"] as? String == "notificationWithdrawn")
                #expect(refused.json["message"] as? String != nil)
            }
            // A removal and a badge show nothing: there is no content to replace (409 notUpdatable).
            for target in [removalID, badgeID] {
                let refused = try await Self.update(server, target, "resurrected")
                #expect(refused.status == 409, "update of \(target): \(refused.text)")
                #expect(refused.json["code"] as? String == "notUpdatable")
                let message = refused.json["message"] as? String ?? ""
                #expect(message.contains(target) && !message.contains("resurrected"), "\(message)")
            }
            // Nothing was queued by the refused updates.
            let queued = try await server.store.claim(owner: "test", limit: 100, leaseDuration: .seconds(60), now: Date())
            #expect(queued.isEmpty)
        }
    }

    @Test("a retry of an accepted update with its Idempotency-Key is replayed after the withdrawal", arguments: Backend.available)
    func retryOfAnAcceptedUpdateIsReplayedAfterAWithdrawal(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            try await server.registerDevice("phone")
            let key = server.keys["app1"]!
            let sent = try await server.client.send(
                "POST", "\(Self.app)/notifications", key: key, json: ["devices": ["phone"], "content": ["body": "r1"]])
            let id = try #require(sent.json["id"] as? String)
            try await Self.deliverAll(server)
            let accepted = try await Self.update(server, id, "r2", key: "upd-replay-1")
            #expect(accepted.status == 202)
            let updateID = try #require(accepted.json["id"] as? String)
            #expect(try await server.client.send("DELETE", "\(Self.app)/notifications/\(id)", key: key).status == 200)

            let retry = try await Self.update(server, id, "r2", key: "upd-replay-1")
            #expect(retry.status == 202, "\(retry.text)")
            #expect(retry.json["id"] as? String == updateID)
            #expect(retry.header("Idempotent-Replayed") == "true")
            // The key with another body is still a reuse, and a new update is refused.
            let reused = try await Self.update(server, id, "r3", key: "upd-replay-1")
            #expect(reused.status == 422 && reused.json["code"] as? String == "idempotencyKeyReused")
            let fresh = try await Self.update(server, id, "r3", key: "upd-replay-2")
            #expect(fresh.status == 409 && fresh.json["code"] as? String == "notificationWithdrawn")
        }
    }
}
