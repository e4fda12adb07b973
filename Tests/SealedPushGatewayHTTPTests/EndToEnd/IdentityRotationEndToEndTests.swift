import Foundation
import SealedPushAPNsEmulator
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import SealedPushServer
import Testing

/// Issue 17 §11, identity rotation end to end on each store: after the app's identity is rotated (what
/// `sealed-push-gateway identity rotate` writes), every send is sealed by the new identity, a phone that pins both
/// keys opens old and new notifications, and receipts sealed to either identity are taken — until the old one is
/// retired, after which its receipts are refused.
@Suite("Server identity rotation end to end", .serialized)
struct IdentityRotationEndToEndTests {
    typealias Phone = LifecycleEndToEndTests.Phone

    @Test("rotate: new sends sealed by the new identity, receipts to both taken; retire: the old one's refused", arguments: Backend.available)
    func rotateAndRetire(_ backend: Backend) async throws {
        try await LifecycleEndToEndTests.withGateway(backend) { gateway in
            // The new identity exists before the rotation: the app ships its public key beside the old one.
            let newIdentity = try ServerIdentity.generate()
            let newPath = gateway.directory.appendingPathComponent("rotated.identity").path
            try newIdentity.write(toFile: newPath)
            let pins = [gateway.identity.publicKey, newIdentity.publicKey]
            let ana = try await Phone(0, gateway: gateway, pins: pins)
            let ben = try await Phone(1, gateway: gateway, pins: pins)
            let old = try await Phone(2, gateway: gateway)  // an app version that pins only the old key
            defer { ana.remove(); ben.remove(); old.remove() }
            let client = gateway.nodes[0].client
            let store = gateway.nodes[0].store
            let app = "/v1/apps/\(LoopbackGateway.appID)"
            func send(_ body: String) async throws -> String {
                let sent = try await client.send(
                    "POST", "\(app)/notifications", key: gateway.key,
                    json: ["devices": [ana.id, ben.id, old.id], "content": ["body": body]])
                #expect(sent.status == 202)
                return try #require(sent.json["id"] as? String)
            }
            func sender(_ push: RecordedNotification) throws -> KeyID {
                try EnvelopeHeader(
                    parsing: try APNsPayload.extractEnvelope(fromBody: push.body)[0..<EnvelopeV1.headerLength]
                ).senderKeyID
            }

            let before = try await send("before")
            let anaBefore = try await LifecycleEndToEndTests.pushes(gateway, ana.token, count: 1)[0]
            #expect(try sender(anaBefore) == gateway.identity.keyID)
            #expect(await ana.receive(anaBefore).content == .decrypted(NotificationContent(body: "before", notificationID: before)))

            // Rotate.
            guard var record = try await store.app(id: LoopbackGateway.appID) else { throw TestFailure("no app") }
            let oldPath = record.serverIdentityPath
            record.previousIdentityPaths.append(oldPath)
            record.serverIdentityPath = newPath
            try await store.putApp(record, now: Date())
            // A node reads an app's record for its sends at most once a second (README, "Rotating a server identity").
            try await Task.sleep(for: .milliseconds(1_100))

            let after = try await send("after")
            let anaAfter = try await LifecycleEndToEndTests.pushes(gateway, ana.token, count: 2)[1]
            #expect(try sender(anaAfter) == newIdentity.keyID)
            #expect(await ana.receive(anaAfter).content == .decrypted(NotificationContent(body: "after", notificationID: after)))
            // The app version that pins only the old key cannot open it: it shows its fallback (why apps ship the new
            // pin before the rotation), and never the content.
            let oldAfter = try await LifecycleEndToEndTests.pushes(gateway, old.token, count: 2)[1]
            if case .decrypted = await old.receive(oldAfter).content { Issue.record("a phone without the new pin opened it") }

            // Receipts sealed to the old identity (about the first send) and to the new one are both taken.
            #expect(try await LifecycleEndToEndTests.postReceipt(gateway, try ana.receipt(about: anaBefore)).status == 204)
            #expect(try await LifecycleEndToEndTests.postReceipt(gateway, try ana.receipt(about: anaAfter)).status == 204)

            // Retire the old identity: a receipt sealed to it is refused (Ben has posted none, so nothing of his is kept).
            record.previousIdentityPaths = []
            try await store.putApp(record, now: Date())
            let benBefore = try await LifecycleEndToEndTests.pushes(gateway, ben.token, count: 1)[0]
            let refused = try await LifecycleEndToEndTests.postReceipt(gateway, try ben.receipt(about: benBefore))
            #expect(refused.status == 422 && refused.json["code"] as? String == "receiptRefused")
            let benAfter = try await LifecycleEndToEndTests.pushes(gateway, ben.token, count: 2)[1]
            #expect(try await LifecycleEndToEndTests.postReceipt(gateway, try ben.receipt(about: benAfter)).status == 204)
            let metrics = try await client.send("GET", "/metrics").text
            #expect(metrics.contains(#"sealedpush_gateway_receipts_refused_total{cause="unknownServerKey"} 1"#))
        }
    }
}
