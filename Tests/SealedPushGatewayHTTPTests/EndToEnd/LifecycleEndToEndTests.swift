import Foundation
import SealedPushAPNsEmulator
import SealedPushClient
import SealedPushClientURLSession
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import SealedPushServer
import Testing

/// Issue 20 §4, end to end on each store: the gateway's withdraw, update and badge reach the device's step (an
/// in-memory notification center in place of `UNUserNotificationCenter`) through the APNs emulator, sealed like any
/// content; the receipts the device seals come back to the gateway, once, and only from the device they name.
@Suite("Notification lifecycle end to end", .serialized)
struct LifecycleEndToEndTests {
    /// One phone: its key ring directory, its step over an in-memory center, and its push token.
    struct Phone {
        let id: String
        let token: String
        let directory: URL
        let registration: DeviceRegistration
        let center = InMemoryNotificationCenter()
        let step: NotificationServiceStep
        let receipts: ReceiptSealer

        static let quiet = Placeholder.text(body: "Notifications updated")

        /// Registers phone `number`, pinning `pins` (default: the gateway's identity).
        init(_ number: Int, gateway: LoopbackGateway, pins: [[UInt8]]? = nil) async throws {
            let pins = pins ?? [gateway.identity.publicKey]
            id = "phone-\(number)"
            token = LoopbackGateway.token(number)
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-phone-\(UUID().uuidString)")
            registration = try DeviceKeyManager(directory: directory).create(now: UInt64(Date().timeIntervalSince1970))
            let receiver = try SealedPushReceiver(
                directory: directory, serverPublicKeys: pins, topic: LoopbackGateway.topic)
            step = NotificationServiceStep(
                receiver: receiver,
                configuration: .init(
                    fallbackPlaceholder: .localized(key: "FALLBACK"),
                    controls: ControlConfiguration(center: center, presentation: .quietPlaceholder(Self.quiet))))
            receipts = try ReceiptSealer(
                keyStore: FileKeyStore(directory: directory, access: .readOnly),
                serverPublicKeys: pins, topic: LoopbackGateway.topic)
            var body = GatewayTestServer.deviceBody(registration, token: token)
            body["environment"] = "sandbox"
            let answer = try await gateway.nodes[0].client.send(
                "PUT", "/v1/apps/\(LoopbackGateway.appID)/devices/\(id)", key: gateway.key, json: body)
            guard answer.status == 201 else { throw TestFailure("registering \(id) answered \(answer.status)") }
        }

        /// Runs the step on a push the emulator accepted; a shown notification is added to the center as iOS would.
        func receive(_ push: RecordedNotification) async -> NotificationDelivery {
            let identifier = push.collapseID ?? push.apnsID
            let delivery = await withCheckedContinuation { continuation in
                step.didReceive(NotificationRequest(body: push.body, identifier: identifier)) { continuation.resume(returning: $0) }
            }
            if case .decrypted(let content) = delivery.content {
                center.add(DeliveredNotification(requestIdentifier: identifier, notificationID: content.notificationID))
            }
            return delivery
        }

        /// A receipt about a push, sealed by this phone's key.
        func receipt(about push: RecordedNotification, _ outcome: DeliveryReceipt.Outcome = .decrypted) throws -> [UInt8] {
            let header = try EnvelopeHeader(
                parsing: try APNsPayload.extractEnvelope(fromBody: push.body)[0..<EnvelopeV1.headerLength])
            let now = UInt64(Date().timeIntervalSince1970)
            // Sealed with this phone's own key, whoever the push was for (a forgery test seals about another's).
            return try receipts.seal(
                DeliveryReceipt(messageID: header.messageID, outcome: outcome, deviceTime: now),
                deviceKeyID: try KeyID(hex: registration.keyId), serverKeyID: header.senderKeyID, now: now)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// Runs `body` against a one-node gateway on `backend` (the emulator keeping 10 pushes per token), then stops it,
    /// also when `body` throws.
    static func withGateway(
        _ backend: Backend, nodes: Int = 1, emulator: (inout APNsEmulatorConfiguration) -> Void = { _ in },
        delivery: (inout DeliveryConfiguration) -> Void = { _ in }, _ body: (LoopbackGateway) async throws -> Void
    ) async throws {
        let gateway = try await LoopbackGateway.start(
            backend, nodes: nodes,
            emulator: {
                $0.recordedNotificationsPerToken = 10
                emulator(&$0)
            }, delivery: delivery)
        do {
            try await body(gateway)
        } catch {
            try? await gateway.stop()
            throw error
        }
        try await gateway.stop()
    }

    /// The pushes the emulator accepted for a token, once there are `count`.
    static func pushes(_ gateway: LoopbackGateway, _ token: String, count: Int) async throws -> [RecordedNotification] {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while ContinuousClock.now < deadline {
            let received = gateway.emulator.recorder.notifications(for: token)
            if received.count >= count { return received }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("\(count) pushes for a device did not arrive within 30 s")
    }

    static func postReceipt(_ gateway: LoopbackGateway, _ bytes: [UInt8], app: String = LoopbackGateway.appID)
        async throws -> HTTPExchange
    {
        try await gateway.nodes[0].client.send(
            "POST", "/v1/apps/\(app)/receipts", body: Data(bytes), headers: ["Content-Type": "application/octet-stream"])
    }

    @Test("send, receipt, update, badge, withdraw: each reaches the phone sealed and acts on its notifications", arguments: Backend.available)
    func lifecycle(_ backend: Backend) async throws {
        let hooks = try await WebhookReceiver.start(answers: [])
        defer { Task { await hooks.stop() } }
        let secret = Array("receipts-webhook-secret-32-bytes".utf8)
        let hook = try UnregisteredWebhookConfiguration(
            url: URL(string: "http://127.0.0.1:\(hooks.port)/events")!, secret: secret)
        try await Self.withGateway(backend, delivery: { $0.webhook = hook }) { gateway in
            let ana = try await Phone(0, gateway: gateway)
            let ben = try await Phone(1, gateway: gateway)
            defer { ana.remove(); ben.remove() }
            let client = gateway.nodes[0].client
            let app = "/v1/apps/\(LoopbackGateway.appID)"
            // Send: every delivered notification carries the gateway's id as its notification-id.
            let sent = try await client.send(
                "POST", "\(app)/notifications", key: gateway.key,
                json: ["devices": [ana.id, ben.id], "content": ["title": "Lunch", "body": "at noon", "thread-id": "t1"]])
            #expect(sent.status == 202)
            let id = try #require(sent.json["id"] as? String)
            let first = try await Self.pushes(gateway, ana.token, count: 1)[0]
            #expect(first.collapseID == id)
            let shown = await ana.receive(first)
            #expect(shown.content == .decrypted(NotificationContent(title: "Lunch", body: "at noon", threadID: "t1", notificationID: id)))
            let benFirst = try await Self.pushes(gateway, ben.token, count: 1)[0]
            _ = await ben.receive(benFirst)

            // Receipt: recorded once, shown in the status; a replay, a forgery and another app's get the one refusal.
            let receipt = try ana.receipt(about: first)
            #expect(receipt.count == 354)
            #expect(try await Self.postReceipt(gateway, receipt).status == 204)
            let replay = try await Self.postReceipt(gateway, receipt)
            #expect(replay.status == 422 && replay.json["code"] as? String == "receiptRefused")
            // Ben's key, about Ana's message: sealed by a registered device, but not about a message sent to it.
            let forged = try ben.receipt(about: first)
            #expect(try await Self.postReceipt(gateway, forged).json["code"] as? String == "receiptRefused")
            #expect(try await Self.postReceipt(gateway, try ben.receipt(about: benFirst), app: "other-app").status == 422)
            var tampered = try ben.receipt(about: benFirst)
            tampered[200] ^= 1
            #expect(try await Self.postReceipt(gateway, tampered).json["code"] as? String == "receiptRefused")
            #expect(try await Self.postReceipt(gateway, Array(receipt.prefix(300))).status == 400)
            #expect(try await Self.postReceipt(gateway, receipt + [0]).status == 413)
            #expect(try await Self.postReceipt(gateway, try ben.receipt(about: benFirst, .fallback(reason: "timedOut"))).status == 204)
            let status = try await client.send("GET", "\(app)/notifications/\(id)", key: gateway.key).json
            let devices = try #require(status["devices"] as? [[String: Any]])
            let anaReceipt = try #require(devices.first { $0["deviceId"] as? String == ana.id }?["receipt"] as? [String: Any])
            #expect(anaReceipt["outcome"] as? String == "decrypted" && anaReceipt["count"] as? Int == 1)
            let benReceipt = try #require(devices.first { $0["deviceId"] as? String == ben.id }?["receipt"] as? [String: Any])
            #expect(benReceipt["outcome"] as? String == "fallback" && benReceipt["reason"] as? String == "timedOut")
            // The webhook forwards each job's first receipt, signed: the ids and the outcome, nothing else.
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while hooks.requests.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let events = hooks.requests
            #expect(events.count == 2)
            for event in events {
                #expect(event.header("SealedPush-Event") == "notification.receipt")
                // Recomputed from RFC 2104 on a bare SHA-256, not with the gateway's own signing.
                let timestamp = try #require(event.header("SealedPush-Timestamp"))
                let mac = try HMACCheck.sha256(key: secret, message: Array("\(timestamp).".utf8) + event.body)
                #expect(event.header("SealedPush-Signature") == "v1=" + Hex.encode(mac))
            }
            let bodies = try events.map { try #require(try JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any]) }
            let anaEvent = try #require(bodies.first { $0["deviceId"] as? String == ana.id })
            #expect(anaEvent["notificationId"] as? String == id && anaEvent["outcome"] as? String == "decrypted")
            #expect(anaEvent["reason"] == nil && anaEvent["appId"] as? String == LoopbackGateway.appID)
            #expect(Set(anaEvent.keys) == [
                "type", "appId", "notificationId", "deviceId", "outcome", "attachmentsDelivered", "attachmentsFailed",
                "deviceTime", "receivedAt",
            ])
            let benEvent = try #require(bodies.first { $0["deviceId"] as? String == ben.id })
            #expect(benEvent["outcome"] as? String == "fallback" && benEvent["reason"] as? String == "timedOut")
            let metrics = try await client.send("GET", "/metrics").text
            #expect(metrics.contains(#"sealedpush_gateway_receipts_total{outcome="decrypted",reason="none"} 1"#))
            #expect(metrics.contains(#"sealedpush_gateway_receipts_refused_total{cause="replayed"} 1"#))
            // A reason outside the reference step's codes (valid under control-v1 §4: another receiver's own code) is
            // counted as `other`, so a device choosing reasons cannot add metric series without bound; the job keeps
            // its first receipt as it came.
            for reason in ["vendorCode1", "vendorCode2"] {
                let odd = try ben.receipt(about: benFirst, .fallback(reason: reason))
                #expect(try await Self.postReceipt(gateway, odd).status == 204)
            }
            let counted = try await client.send("GET", "/metrics").text
            #expect(counted.contains(#"sealedpush_gateway_receipts_total{outcome="fallback",reason="other"} 2"#))
            #expect(counted.contains(#"sealedpush_gateway_receipts_total{outcome="fallback",reason="timedOut"} 1"#))
            #expect(!counted.contains("vendorCode"))
            // A job takes ReceivedReceipt.maxPerJob receipts (Ben's has 3): past that, one more is refused like any
            // other receipt that does not count, and counted by its cause.
            for _ in 3..<ReceivedReceipt.maxPerJob {
                #expect(try await Self.postReceipt(gateway, try ben.receipt(about: benFirst, .duplicate)).status == 204)
            }
            let over = try await Self.postReceipt(gateway, try ben.receipt(about: benFirst, .duplicate))
            #expect(over.status == 422 && over.json["code"] as? String == "receiptRefused")
            #expect(try await client.send("GET", "/metrics").text
                .contains(#"sealedpush_gateway_receipts_refused_total{cause="limitReached"} 1"#))

            // Update: the phone shows the new words under the same id, in place of the old notification.
            let updated = try await client.send(
                "POST", "\(app)/notifications/\(id)/update", key: gateway.key,
                json: ["content": ["title": "Lunch", "body": "at one", "thread-id": "t1"]])
            #expect(updated.status == 202)
            let update = try await Self.pushes(gateway, ana.token, count: 2)[1]
            #expect(update.collapseID == id)
            let edited = await ana.receive(update)
            #expect(edited.content == .decrypted(NotificationContent(title: "Lunch", body: "at one", threadID: "t1", notificationID: id)))
            #expect(ana.center.delivered.map(\.requestIdentifier) == [id])

            // Badge.
            let badge = try await client.send("POST", "\(app)/badge", key: gateway.key, json: ["devices": [ana.id], "count": 4])
            #expect(badge.status == 202)
            let badgePush = try await Self.pushes(gateway, ana.token, count: 3)[2]
            let badged = await ana.receive(badgePush)
            #expect(badged.outcome == .control(.badge) && badged.content == .placeholder(Phone.quiet))
            #expect(ana.center.badge == 4)

            // Withdraw: both phones got it, so both get a sealed remove; the notification leaves their centers.
            let withdrawn = try await client.send("DELETE", "\(app)/notifications/\(id)", key: gateway.key)
            #expect(withdrawn.status == 200)
            #expect(withdrawn.json["reachedDevices"] as? Int == 2 && withdrawn.json["withdrawnJobs"] as? Int == 0)
            let removalID = try #require(withdrawn.json["removalId"] as? String)
            let again = try await client.send("DELETE", "\(app)/notifications/\(id)", key: gateway.key)
            #expect(again.status == 200 && again.json["removalId"] as? String == removalID)
            let removePush = try await Self.pushes(gateway, ana.token, count: 4)[3]
            #expect(removePush.collapseID == removalID)
            let removed = await ana.receive(removePush)
            #expect(removed.outcome == .control(.remove))
            #expect(ana.center.delivered.isEmpty)
            let benPushes = try await Self.pushes(gateway, ben.token, count: 3)  // the original, the update, the remove
            #expect(await ben.receive(benPushes[1]).outcome == .decrypted)
            #expect(ben.center.delivered.map(\.requestIdentifier) == [id])
            #expect(await ben.receive(benPushes[2]).outcome == .control(.remove))
            #expect(ben.center.delivered.isEmpty)
            // The update of a withdrawn notification is refused; nothing more is sent.
            let late = try await client.send(
                "POST", "\(app)/notifications/\(id)/update", key: gateway.key, json: ["content": ["body": "x"]])
            #expect(late.status == 409 && late.json["code"] as? String == "notificationWithdrawn")
            try await Task.sleep(for: .milliseconds(300))
            #expect(gateway.emulator.recorder.notifications(for: ana.token).count == 4)
            #expect(gateway.emulator.recorder.notifications(for: ben.token).count == 3)

            // The receipt's outcome is stored only in the fields the contract names: no receipt plaintext.
            for file in try await gateway.rawDatabase() {
                #expect(!file.bytes.contains(bytes: Array(#""outcome""#.utf8)), "receipt JSON in \(file.name)")
                #expect(!file.bytes.contains(bytes: Array("at noon".utf8)), "content in \(file.name)")
                #expect(!file.bytes.contains(bytes: Array("at one".utf8)), "content in \(file.name)")
            }
        }
    }

    @Test("the step posts a receipt after delivering; one it cannot post waits in the queue until a flush", arguments: Backend.available)
    func receiptSender(_ backend: Backend) async throws {
        try await Self.withGateway(backend) { gateway in
            let phone = try await Phone(0, gateway: gateway)
            defer { phone.remove() }
            let client = gateway.nodes[0].client
            let app = "/v1/apps/\(LoopbackGateway.appID)"
            let queue = phone.directory.appendingPathComponent("receipts")
            let receiptsURL = URL(string: client.base.absoluteString + "\(app)/receipts")!
            // Nothing listens on this port: every post fails at once (a phone offline).
            let nowhere = URL(string: "http://127.0.0.1:\(try LoopbackListener.freePort())\(app)/receipts")!
            func step(_ url: URL) throws -> NotificationServiceStep {
                let sender = ReceiptSender(
                    sealer: phone.receipts, transport: URLSessionReceiptTransport(url: url), queueDirectory: queue)
                let receiver = try SealedPushReceiver(
                    directory: phone.directory, serverPublicKeys: [gateway.identity.publicKey], topic: LoopbackGateway.topic)
                return NotificationServiceStep(receiver: receiver, configuration: .init(receipts: sender))
            }
            func receipt(of id: String) async throws -> [String: Any]? {
                let status = try await client.send("GET", "\(app)/notifications/\(id)", key: gateway.key).json
                return (status["devices"] as? [[String: Any]])?.first?["receipt"] as? [String: Any]
            }
            func awaitReceipt(of id: String) async throws -> [String: Any] {
                let deadline = ContinuousClock.now.advanced(by: .seconds(10))
                while ContinuousClock.now < deadline {
                    if let receipt = try await receipt(of: id) { return receipt }
                    try await Task.sleep(for: .milliseconds(20))
                }
                throw TestFailure("no receipt arrived within 10 s")
            }
            var ids: [String] = []
            for text in ["one", "two"] {
                let sent = try await client.send(
                    "POST", "\(app)/notifications", key: gateway.key, json: ["devices": [phone.id], "content": ["body": text]])
                ids.append(try #require(sent.json["id"] as? String))
            }
            // In the order sent (the two may be delivered in either order): each one's collapse id is its id.
            let received = try await Self.pushes(gateway, phone.token, count: 2)
            let pushes = try ids.map { id in try #require(received.first { $0.collapseID == id }) }
            // Online: the content handler first, then the receipt, recorded by the gateway.
            let online = try step(receiptsURL)
            let delivered = await withCheckedContinuation { continuation in
                online.didReceive(NotificationRequest(body: pushes[0].body)) { continuation.resume(returning: $0) }
            }
            #expect(delivered.outcome == .decrypted)
            #expect(try await awaitReceipt(of: ids[0])["outcome"] as? String == "decrypted")

            // Offline: the notification is delivered all the same; its receipt waits in the queue, sealed.
            let offline = try step(nowhere)
            let second = await withCheckedContinuation { continuation in
                offline.didReceive(NotificationRequest(body: pushes[1].body)) { continuation.resume(returning: $0) }
            }
            #expect(second.outcome == .decrypted)
            let sender = ReceiptSender(
                sealer: phone.receipts, transport: URLSessionReceiptTransport(url: receiptsURL), queueDirectory: queue)
            let waitUntil = ContinuousClock.now.advanced(by: .seconds(10))
            while sender.queuedCount == 0, ContinuousClock.now < waitUntil { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(sender.queuedCount == 1)
            #expect(try await receipt(of: ids[1]) == nil)
            let files = try FileManager.default.contentsOfDirectory(atPath: queue.path)
            let file = try #require(files.first)
            let attributes = try FileManager.default.attributesOfItem(atPath: queue.appendingPathComponent(file).path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect((attributes[.size] as? Int) == 354)

            // The app comes back online and flushes: recorded once; a second flush has nothing left.
            #expect(await sender.flush(deadline: ContinuousClock.now.advanced(by: .seconds(10))) == 1)
            #expect(sender.queuedCount == 0)
            #expect(try await awaitReceipt(of: ids[1])["outcome"] as? String == "decrypted")
            #expect(await sender.flush(deadline: ContinuousClock.now.advanced(by: .seconds(10))) == 0)
        }
    }

    @Test("control messages as background pushes: no alert, priority 5, the app applies them itself", arguments: Backend.available)
    func backgroundCarrier(_ backend: Backend) async throws {
        try await Self.withGateway(backend) { gateway in
            let phone = try await Phone(0, gateway: gateway)
            defer { phone.remove() }
            let client = gateway.nodes[0].client
            let app = "/v1/apps/\(LoopbackGateway.appID)"
            // What the app does in didReceiveRemoteNotification: the same receiver, then the control applied.
            let receiver = try SealedPushReceiver(
                directory: phone.directory, serverPublicKeys: [gateway.identity.publicKey], topic: LoopbackGateway.topic)
            let controls = ControlConfiguration(center: phone.center)
            func applyInApp(_ push: RecordedNotification) async throws -> NotificationControl.Kind? {
                let opened = try receiver.open(body: push.body)
                guard let control = opened.content.control else { return nil }
                try await controls.apply(control, requestIdentifier: nil)
                return control.kind
            }
            let refused = try await client.send(
                "POST", "\(app)/badge", key: gateway.key,
                json: ["devices": [phone.id], "count": 2, "carrier": "background", "priority": 10])
            #expect(refused.status == 422 && refused.json["field"] as? String == "priority")
            #expect(try await client.send(
                "POST", "\(app)/badge", key: gateway.key, json: ["devices": [phone.id], "count": 2, "carrier": "pigeon"]
            ).json["field"] as? String == "carrier")

            let badge = try await client.send(
                "POST", "\(app)/badge", key: gateway.key, json: ["devices": [phone.id], "count": 9, "carrier": "background"])
            #expect(badge.status == 202)
            let badgePush = try await Self.pushes(gateway, phone.token, count: 1)[0]
            #expect(badgePush.pushType == "background" && badgePush.priority == 5)
            #expect(badgePush.body.starts(with: Array(#"{"aps":{"content-available":1},"sp":""#.utf8)))
            #expect(!badgePush.body.contains(bytes: Array("alert".utf8)))
            #expect(try await applyInApp(badgePush) == .badge)
            #expect(phone.center.badge == 9)

            // A notification shown as an alert, then withdrawn with a background remove.
            let sent = try await client.send(
                "POST", "\(app)/notifications", key: gateway.key, json: ["devices": [phone.id], "content": ["body": "hi"]])
            let id = try #require(sent.json["id"] as? String)
            let shownPush = try await Self.pushes(gateway, phone.token, count: 2)[1]
            #expect(shownPush.pushType == "alert" && shownPush.priority == 10)
            _ = await phone.receive(shownPush)
            #expect(phone.center.delivered.count == 1)
            let withdrawn = try await client.send(
                "DELETE", "\(app)/notifications/\(id)", key: gateway.key, query: [URLQueryItem(name: "carrier", value: "background")])
            #expect(withdrawn.status == 200)
            let removePush = try await Self.pushes(gateway, phone.token, count: 3)[2]
            #expect(removePush.pushType == "background" && removePush.priority == 5)
            #expect(try await applyInApp(removePush) == .remove)
            #expect(phone.center.delivered.isEmpty)
        }
    }

    @Test("an update of a notification that fell back replaces the placeholder with the content", arguments: Backend.available)
    func updateAfterFallback(_ backend: Backend) async throws {
        try await Self.withGateway(backend) { gateway in
            let phone = try await Phone(0, gateway: gateway)
            defer { phone.remove() }
            let client = gateway.nodes[0].client
            let app = "/v1/apps/\(LoopbackGateway.appID)"
            // The phone's keys in a store that is locked at first (before the first unlock after a reboot).
            let keys = InMemoryKeyStore(keyRing: try FileKeyStore(directory: phone.directory, access: .readOnly).loadKeyRing())
            keys.setAvailable(false)
            let center = InMemoryNotificationCenter()
            let placeholder = Placeholder.localized(key: "FALLBACK")
            let step = NotificationServiceStep(
                receiver: try SealedPushReceiver(
                    keyStore: keys.readOnlyView(), replayGuard: InMemoryReplayGuard(),
                    serverPublicKeys: [gateway.identity.publicKey], topic: LoopbackGateway.topic),
                configuration: .init(fallbackPlaceholder: placeholder, controls: ControlConfiguration(center: center)))
            func receive(_ push: RecordedNotification) async -> NotificationDelivery {
                let identifier = push.collapseID ?? push.apnsID
                let delivery = await withCheckedContinuation { continuation in
                    step.didReceive(NotificationRequest(body: push.body, identifier: identifier)) { continuation.resume(returning: $0) }
                }
                // What iOS shows under the request's identifier (its collapse id): the content, or the placeholder.
                var id: String?
                if case .decrypted(let content) = delivery.content { id = content.notificationID }
                center.add(DeliveredNotification(requestIdentifier: identifier, notificationID: id))
                return delivery
            }
            let sent = try await client.send(
                "POST", "\(app)/notifications", key: gateway.key, json: ["devices": [phone.id], "content": ["body": "v1"]])
            let id = try #require(sent.json["id"] as? String)
            let first = await receive(try await Self.pushes(gateway, phone.token, count: 1)[0])
            #expect(first.outcome == .fallback(.keysUnavailable) && first.content == .placeholder(placeholder))
            #expect(center.delivered == [DeliveredNotification(requestIdentifier: id)])

            keys.setAvailable(true)  // unlocked
            let updated = try await client.send(
                "POST", "\(app)/notifications/\(id)/update", key: gateway.key, json: ["content": ["body": "v2"]])
            #expect(updated.status == 202)
            let update = try await Self.pushes(gateway, phone.token, count: 2)[1]
            #expect(update.collapseID == id)
            let second = await receive(update)
            #expect(second.content == .decrypted(NotificationContent(body: "v2", notificationID: id)))
            // One notification on screen, under the same request: the content in place of the placeholder.
            #expect(center.delivered == [DeliveredNotification(requestIdentifier: id, notificationID: id)])
        }
    }

    @Test("a withdrawal racing delivery: the job in flight gets a remove, the queued ones are never sent", arguments: Backend.available)
    func withdrawRacingDelivery(_ backend: Backend) async throws {
        // One send at a time, the first one answered after 2 s: the others wait in the queue meanwhile.
        try await Self.withGateway(
            backend, emulator: { $0.faults.script = [.slow(milliseconds: 2_000)] }, delivery: { $0.maxConcurrentSends = 1 }
        ) { gateway in
            var phones: [Phone] = []
            for number in 0..<3 { phones.append(try await Phone(number, gateway: gateway)) }
            defer { for phone in phones { phone.remove() } }
            let client = gateway.nodes[0].client
            let app = "/v1/apps/\(LoopbackGateway.appID)"
            let sent = try await client.send(
                "POST", "\(app)/notifications", key: gateway.key,
                json: ["devices": phones.map(\.id), "content": ["body": "secret plan"]])
            let id = try #require(sent.json["id"] as? String)
            // Wait until the first send is in the emulator's hands (held for 2 s), then withdraw.
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while gateway.emulator.recorder.totalRequests == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let withdrawn = try await client.send("DELETE", "\(app)/notifications/\(id)", key: gateway.key)
            #expect(withdrawn.status == 200)
            #expect(withdrawn.json["withdrawnJobs"] as? Int == 3)
            #expect(withdrawn.json["reachedDevices"] as? Int == 1)
            let status = try await client.send("GET", "\(app)/notifications/\(id)", key: gateway.key).json
            let states = (status["devices"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }.sorted()
            #expect(states == ["Withdrawn", "Withdrawn", "WithdrawnInFlight"])
            // The held send went out; its phone then gets the remove. The two queued phones get nothing, ever.
            let total = { phones.map { gateway.emulator.recorder.notifications(for: $0.token).count }.reduce(0, +) }
            let arrival = ContinuousClock.now.advanced(by: .seconds(20))
            while total() < 2, ContinuousClock.now < arrival { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(500))  // time for anything that should not come
            let received = phones.map { gateway.emulator.recorder.notifications(for: $0.token).count }
            #expect(received.sorted() == [0, 0, 2])
            let reached = try #require(phones.first { gateway.emulator.recorder.notifications(for: $0.token).count == 2 })
            let pushes = gateway.emulator.recorder.notifications(for: reached.token)
            _ = await reached.receive(pushes[0])
            #expect(reached.center.delivered.count == 1)
            #expect(await reached.receive(pushes[1]).outcome == .control(.remove))
            #expect(reached.center.delivered.isEmpty)
        }
    }
}
