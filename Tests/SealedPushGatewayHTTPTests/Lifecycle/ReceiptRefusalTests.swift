import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import Testing

/// The unauthenticated receipt endpoint (`Specs/gateway-api.yaml` postReceipt): "every receipt that does not count
/// gets one and the same `422 receiptRefused` … No answer reveals anything about other apps or devices." An outside
/// audit found forged receipts naming a registered device key answered `429` once that device's bucket was empty,
/// and `422` for ever for an unknown key — an oracle for registered keys — and the device's own receipts then refused.
@Suite("Gateway HTTP: refused receipts", .serialized)
struct ReceiptRefusalTests {
    /// A receipt-sized body with a valid header naming `sender` as the device key and `recipient` as the server
    /// identity, and random bytes where the ciphertext goes: it never opens.
    static func forged(recipient: KeyID, sender: KeyID) -> [UInt8] {
        let now = UInt64(Date().timeIntervalSince1970)
        func bigEndian(_ value: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }
        let header = [1, 1] + recipient.bytes + sender.bytes + random(16) + bigEndian(now) + bigEndian(now + 3600) + random(32)
        return header + random(DeliveryReceipt.maximumEnvelopeLength - header.count)
    }

    static func post(_ server: GatewayTestServer, _ bytes: [UInt8], app: String = "app1") async throws -> HTTPExchange {
        try await server.client.send(
            "POST", "/v1/apps/\(app)/receipts", body: Data(bytes), headers: ["Content-Type": "application/octet-stream"])
    }

    @Test("forged receipts are answered alike for registered and unknown keys and leave the device's allowance alone", arguments: Backend.available)
    func forgedReceiptsRevealNothingAndUseUpNothing(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let ring = try await server.registerDevice("phone")
            let identity = try KeyID.derived(fromPublicKey: server.identities["app1"]!.publicKey)
            let registered = ring.current.keyID
            let unknown = try KeyID(hex: "0000000000000000")
            // More than the device's burst (30 by default) of each.
            var answers: [KeyID: [String]] = [:]
            for _ in 0..<40 {
                for sender in [registered, unknown] {
                    let answer = try await Self.post(server, Self.forged(recipient: identity, sender: sender))
                    answers[sender, default: []].append("\(answer.status) \(answer.text)")
                }
            }
            #expect(answers[registered] == answers[unknown])
            #expect(Set(answers[registered] ?? []).count == 1, "\(Set(answers[registered] ?? []))")
            #expect(answers[unknown]?.first?.hasPrefix("422 ") == true && answers[unknown]?.first?.contains("receiptRefused") == true)

            // The device's own receipt about a notification it was sent still counts.
            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: server.keys["app1"],
                json: ["devices": ["phone"], "content": ["body": "hello"]])
            #expect(sent.status == 202)
            let job = try #require(
                try await server.store.claim(owner: "t", limit: 10, leaseDuration: .seconds(60), now: Date()).first)
            let header = try EnvelopeHeader(
                parsing: try APNsPayload.extractEnvelope(fromBody: job.body.bytes)[0..<EnvelopeV1.headerLength])
            let now = UInt64(Date().timeIntervalSince1970)
            let sealer = try ReceiptSealer(
                keyStore: InMemoryKeyStore(keyRing: ring), serverPublicKeys: [server.identities["app1"]!.publicKey],
                topic: GatewayTestServer.topic)
            let receipt = try sealer.seal(
                DeliveryReceipt(messageID: header.messageID, outcome: .decrypted, deviceTime: now),
                deviceKeyID: registered, serverKeyID: header.senderKeyID, now: now)
            let taken = try await Self.post(server, receipt)
            #expect(taken.status == 204, "\(taken.text)")
            let replayed = try await Self.post(server, receipt)
            #expect("\(replayed.status) \(replayed.text)" == answers[unknown]?.first)
        }
    }

    @Test("a receipt over its fixed size is refused naming that size, not maxBodyBytes")
    func oversizedReceiptNamesItsFixedSize() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let answer = try await Self.post(server, [UInt8](repeating: 7, count: DeliveryReceipt.maximumEnvelopeLength + 1))
            #expect(answer.status == 413 && answer.json["code"] as? String == "requestTooLarge")
            #expect(answer.json["limit"] as? Int == DeliveryReceipt.maximumEnvelopeLength)
            let message = answer.json["message"] as? String ?? ""
            #expect(message.contains("354") && message.contains("receipt") && !message.contains("maxBodyBytes"), "\(message)")
        }
    }

    @Test("refused receipts are limited per client: past the burst every key gets the same 429, then the device's own receipt counts again")
    func refusedReceiptsAreLimitedPerClientAlike() async throws {
        let limits = RateLimits(defaults: .init(refusedReceiptsPerSecondPerClient: 0.001, refusedReceiptBurstPerClient: 4))
        try await GatewayTestServer.with(.sqlite, rateLimits: limits) { server in
            let ring = try await server.registerDevice("phone")
            let identity = try KeyID.derived(fromPublicKey: server.identities["app1"]!.publicKey)
            let unknown = try KeyID(hex: "0000000000000000")
            for index in 0..<4 {
                let sender = index.isMultiple(of: 2) ? ring.current.keyID : unknown
                #expect(try await Self.post(server, Self.forged(recipient: identity, sender: sender)).status == 422)
            }
            var refusals: [String] = []
            for sender in [ring.current.keyID, unknown] {
                for app in ["app1", "no-such-app"] {
                    let answer = try await Self.post(server, Self.forged(recipient: identity, sender: sender), app: app)
                    #expect(answer.status == 429 && answer.header("Retry-After") != nil)
                    // The same answer whatever the key and app; only the seconds to wait may tick down between two.
                    refusals.append(
                        answer.text.replacingOccurrences(
                            of: #"retry after [0-9]+ s"#, with: "retry after N s", options: .regularExpression))
                }
            }
            #expect(Set(refusals).count == 1, "\(refusals)")
            #expect(refusals.first?.contains("refusedReceiptsPerSecondPerClient") == true)
        }
    }

    @Test func refusedReceiptLimitsAreTopLevelOnly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func load(_ json: String) -> String {
            let path = directory.appendingPathComponent("gateway.json").path
            _ = FileManager.default.createFile(atPath: path, contents: Data(json.utf8))
            do {
                try GatewayConfiguration.load(path: path, environment: [:]).validate()
                return "ok"
            } catch let error as GatewayConfigurationError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(load(#"{"database":"sqlite:x","rateLimits":{"refusedReceiptsPerSecondPerClient":50,"refusedReceiptBurstPerClient":500}}"#) == "ok")
        #expect(load(#"{"database":"sqlite:x","rateLimits":{"apps":{"chat":{"refusedReceiptBurstPerClient":5}}}}"#)
            .contains("set them at the top level"))
        #expect(load(#"{"database":"sqlite:x","rateLimits":{"refusedReceiptBurstPerClient":0}}"#)
            .contains("rateLimits.refusedReceiptBurstPerClient"))
    }
}
