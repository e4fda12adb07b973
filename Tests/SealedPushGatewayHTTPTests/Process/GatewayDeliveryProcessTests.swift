import Foundation
import SealedPushAPNsEmulator
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import Testing

/// The real `sealed-push-gateway serve` process delivering to a loopback APNs emulator: the API → queue → APNs path
/// end to end, and a `kill -9` in the middle of a 10,000-notification run.
@Suite("Gateway process: delivery end to end", .serialized)
struct GatewayDeliveryProcessTests {
    /// init → serve (delivery pointed at the emulator by environment overrides) → register → send → `sent` with the
    /// apns-id the emulator accepted, whose body the device opens to the content sent; a token APNs calls
    /// unregistered ends `unregistered` and the device is marked; SIGTERM exits 0.
    @Test func serveDeliversToAPNs() async throws {
        let unregisteredToken = GatewayWithEmulator.token(1)
        let setup = try await GatewayWithEmulator.start {
            $0.unregisteredDeviceTokens = [unregisteredToken: Date(timeIntervalSince1970: 1_700_000_000)]
        }
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let gateway = try await GatewayProcess.start(
            config: setup.configPath, environment: setup.environment,
            logPath: setup.directory.appendingPathComponent("serve.log").path)
        let client = HTTPTestClient(port: gateway.port)
        let key = setup.apiKey
        let app = GatewayWithEmulator.appID

        let ring = try await setup.register(0, client: client)
        _ = try await setup.register(1, client: client)
        // The node's first claim, at start, finds the queue empty: from then on a small send is handed straight to
        // its delivery loop (the margin is for a loaded machine).
        try await Task.sleep(for: .milliseconds(500))
        let marker = "delivered-\(UUID().uuidString)"
        let sent = try await client.send(
            "POST", "/v1/apps/\(app)/notifications", key: key,
            json: ["devices": ["device-0", "device-1"], "content": ["title": "Order", "body": marker], "collapseId": "order-7"])
        #expect(sent.status == 202, "\(sent.text)")
        let id = try #require(sent.json["id"] as? String)

        // Poll the status until both devices are final (at most 60 s).
        var states: [String: [String: Any]] = [:]
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while ContinuousClock.now < deadline {
            let status = try await client.send("GET", "/v1/apps/\(app)/notifications/\(id)", key: key)
            let devices = status.json["devices"] as? [[String: Any]] ?? []
            states = Dictionary(uniqueKeysWithValues: devices.map { ($0["deviceId"] as? String ?? "", $0) })
            if states.values.allSatisfy({ $0["state"] as? String != "queued" }), states.count == 2 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(states["device-0"]?["state"] as? String == "sent", "\(states); log:\n\(GatewayProcess.tail(gateway.logPath))")
        #expect(states["device-1"]?["state"] as? String == "unregistered")
        #expect(states["device-1"]?["reason"] as? String == "Unregistered")
        let device1 = try await client.send("GET", "/v1/apps/\(app)/devices/device-1", key: key)
        #expect(device1.json["unregisteredAt"] as? String != nil)

        // What APNs received: the sealed body under the apns-id the status reports, with the notification's
        // collapse id, which the device opens to the content the backend sent.
        let received = setup.emulator.recorder.notifications(for: GatewayWithEmulator.token(0))
        #expect(received.count == 1)
        let notification = try #require(received.first)
        #expect(notification.apnsID.lowercased() == (states["device-0"]?["apnsId"] as? String)?.lowercased())
        #expect(notification.collapseID == "order-7")
        #expect(notification.topic == GatewayWithEmulator.topic)
        #expect(!notification.body.contains(bytes: Array(marker.utf8)))
        let opened = try setup.open(notification.body, with: ring)
        #expect(opened.title == "Order")
        #expect(opened.body == marker)
        // `serve` hands the API's sends to its delivery loop: both jobs started without a claim.
        let metrics = try await client.send("GET", "/metrics").text
        func started(_ path: String) -> Int? {
            metrics.split(separator: "\n").first {
                $0.hasPrefix("sealedpush_gateway_jobs_started_total{") && $0.contains("path=\"\(path)\"")
                    && $0.contains("platform=\"apns\"")
            }.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) }
        }
        #expect(started("handover") == 2 && started("claim") == 0, "handover \(String(describing: started("handover"))), claim \(String(describing: started("claim")))")
        // The one job sent has its latency from the 202 to APNs's answer, in the operator's buckets (up to an hour).
        let latency = metrics.split(separator: "\n").filter { $0.hasPrefix("sealedpush_gateway_delivery_seconds") }
        #expect(latency.contains { $0.hasPrefix("sealedpush_gateway_delivery_seconds_count{") && $0.contains("platform=\"apns\"") && $0.hasSuffix(" 1") }, "\(latency)")
        #expect(latency.contains { $0.contains("le=\"3600") && $0.contains("platform=\"apns\"") && $0.hasSuffix(" 1") }, "\(latency)")

        #expect(try await gateway.terminate() == 0)
        // The content never reached the database or the log in clear.
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: setup.databasePath + suffix) {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: setup.databasePath + suffix)))
            #expect(!bytes.contains(bytes: Array(marker.utf8)), "marker in gateway.sqlite\(suffix)")
        }
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: gateway.logPath)))
        #expect(!log.contains(bytes: Array(marker.utf8)))
    }

    /// Media end to end through the process: the gateway serves its own blob store (`overflow.listen`); a send
    /// with an uploaded image reaches the emulator; the device opens the envelope, downloads the attachment from
    /// the gateway's blob server over HTTP and decrypts it to the original bytes.
    @Test func serveCarriesAttachmentsFromItsOwnBlobServer() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let blobPort = try LoopbackListener.freePort()
        var environment = setup.environment
        environment["SEALEDPUSH_GATEWAY_BLOB_DIR"] = "blobs"
        environment["SEALEDPUSH_GATEWAY_BLOB_URL_PREFIX"] = "http://127.0.0.1:\(blobPort)/"
        environment["SEALEDPUSH_GATEWAY_BLOB_LISTEN"] = "127.0.0.1:\(blobPort)"
        let gateway = try await GatewayProcess.start(
            config: setup.configPath, environment: environment,
            logPath: setup.directory.appendingPathComponent("serve.log").path)
        let client = HTTPTestClient(port: gateway.port)
        let ring = try await setup.register(0, client: client)
        var image = Array("PNG-\(UUID().uuidString)".utf8)
        while image.count < 150_000 { image.append(UInt8.random(in: 0...255)) }
        let sent = try await client.send(
            "POST", "/v1/apps/\(GatewayWithEmulator.appID)/notifications", key: setup.apiKey,
            json: [
                "devices": ["device-0"], "content": ["body": "photo"],
                "attachments": [["type": "image/png", "name": "photo.png", "data": Data(image).base64EncodedString()]],
            ])
        try #require(sent.status == 202, "\(sent.text)")
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while setup.emulator.recorder.notifications(for: GatewayWithEmulator.token(0)).isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let received = try #require(setup.emulator.recorder.notifications(for: GatewayWithEmulator.token(0)).first)
        let content = try setup.open(received.body, with: ring)
        #expect(content.body == "photo")
        let descriptor = try AttachmentDescriptor(parsing: try #require(content.attachments?.first))
        #expect(descriptor.name == "photo.png")
        let url = try #require(URL(string: descriptor.blob.url))
        #expect(url.port == blobPort)
        let (blob, response) = try await URLSession.shared.data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let opened = try BlobOpener.open(blob, reference: descriptor.blob, maxPlaintextSize: descriptor.mediaType.kind.maxSize)
        #expect(opened == image)
        #expect(try await gateway.terminate() == 0)
    }

    /// Two live processes never share a node id: a second `serve` with the first's node id exits non-zero before
    /// listening, naming the first (its pid and boot id); once the first stopped cleanly, the same start succeeds
    /// at once.
    @Test func secondProcessWithTheSameNodeIDRefusesToStart() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let first = try await GatewayProcess.start(
            config: setup.configPath, environment: setup.environment,
            logPath: setup.directory.appendingPathComponent("first.log").path)
        let secondLog = setup.directory.appendingPathComponent("second.log").path
        await #expect(throws: TestFailure.self) {
            _ = try await GatewayProcess.start(config: setup.configPath, environment: setup.environment, logPath: secondLog)
        }
        let refusal = GatewayProcess.tail(secondLog)
        #expect(refusal.contains("Error: node id 'node-1' is in use by another process"), "\(refusal)")
        #expect(refusal.contains("pid \(first.process.processIdentifier)"), "\(refusal)")
        #expect(try await first.terminate() == 0)
        let second = try await GatewayProcess.start(
            config: setup.configPath, environment: setup.environment, logPath: secondLog)
        #expect(try await second.terminate() == 0)
    }

    /// `kill -9` the gateway while it is accepting and delivering 10,000 notifications, then start it again. The
    /// backend retries every request that got no answer with the same `Idempotency-Key`. Every notification
    /// reaches the emulator; none is created twice; the only duplicates are sends in flight at the kill (at most
    /// `maxConcurrentSends`), each a byte-identical copy with the same collapse id.
    @Test func killDashNineLosesNothing() async throws {
        let total = 10_000
        let deviceCount = 50
        let maxConcurrentSends = 64
        let setup = try await GatewayWithEmulator.start {
            $0.recordedNotificationsPerToken = 1_000
            $0.recordedNotificationsLimit = 50_000
            // Some answers take 300 ms, so sends are in flight at the kill: since a send wakes delivery at once, the
            // queue no longer waits for a poll and could otherwise be empty at that instant.
            $0.faults = EmulatorFaultPlan(random: [.init(.slow(milliseconds: 300), probability: 0.2)], seed: 17)
        }
        defer { setup.removeFiles(); Task { await setup.stop() } }
        // Short deadlines so the killed node's leases expire within the test: 5 s per APNs send, 15 s leases.
        try setup.setDelivery([
            "apnsDeadlineSeconds": 5, "requestTimeoutSeconds": 5, "leaseSeconds": 15,
            "maxConcurrentSends": maxConcurrentSends,
        ])
        let logPath = setup.directory.appendingPathComponent("serve.log").path
        var gateway = try await GatewayProcess.start(config: setup.configPath, environment: setup.environment, logPath: logPath)
        let first = HTTPTestClient(port: gateway.port)
        var rings: [DeviceKeyRing] = []
        for number in 0..<deviceCount { rings.append(try await setup.register(number, client: first)) }

        let backend = RetryingBackend(first: first)
        let current = backend.current
        let acknowledged = backend.acknowledged
        let senders = backend.start(total: total, path: "/v1/apps/\(GatewayWithEmulator.appID)/notifications", key: setup.apiKey) {
            ["devices": ["device-\($0 % deviceCount)"], "content": ["body": "kill test \($0)"]]
        }

        // Kill once the emulator has accepted 3,000 while the API is still accepting.
        let recorder = setup.emulator.recorder
        let killBy = ContinuousClock.now.advanced(by: .seconds(180))
        while recorder.totalAccepted < 3_000, ContinuousClock.now < killBy { try await Task.sleep(for: .milliseconds(20)) }
        let acceptedAtKill = recorder.totalAccepted
        let acknowledgedAtKill = acknowledged.withLock { $0.count }
        current.withLock { $0 = nil }
        try await gateway.killNow()
        #expect(acceptedAtKill >= 3_000)
        #expect(acknowledgedAtKill < total, "the kill came after the API had accepted everything")

        // The jobs the dead process held (leased for 15 s): the restart takes them back at once (issue 17).
        let deadStore = try SQLiteGatewayStore(path: setup.databasePath)
        let leasedAtKill = try await deadStore.leasedJobs(nodeID: "node-1")
        try await deadStore.close()
        let acceptedCountsAtKill = recorder.acceptedCounts
        let leasedAPNsIDs = leasedAtKill.map {
            DeliveryIdentifiers.apnsID(notificationID: $0.notificationID, deviceID: $0.deviceID).uuidString.lowercased()
        }
        #expect(!leasedAtKill.isEmpty, "the dead process held no lease")

        let restartedAt = ContinuousClock.now
        gateway = try await GatewayProcess.start(config: setup.configPath, environment: setup.environment, logPath: logPath)
        let restarted = HTTPTestClient(port: gateway.port)
        current.withLock { $0 = restarted }
        // Every job the dead process held is sent again (accepted once more than at the kill) within 5 s.
        func resentCount() -> Int {
            let accepted = recorder.acceptedCounts
            return leasedAPNsIDs.filter { (accepted[$0] ?? 0) > (acceptedCountsAtKill[$0] ?? 0) }.count
        }
        while resentCount() < leasedAPNsIDs.count, restartedAt.duration(to: .now) < .seconds(30) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let takenBackIn = restartedAt.duration(to: .now)
        #expect(resentCount() == leasedAPNsIDs.count, "\(leasedAPNsIDs.count - resentCount()) leased jobs not resent")
        #expect(takenBackIn <= .seconds(5), "the dead process's \(leasedAPNsIDs.count) jobs took \(takenBackIn)")
        try await senders.value
        let ids = acknowledged.withLock { $0 }
        #expect(ids.count == total)
        #expect(Set(ids.values).count == total)

        // Every job's apns-id accepted at least once (the killed node's leases expire after 15 s).
        var expected: [String: Int] = [:]
        for (index, id) in ids {
            let apnsID = DeliveryIdentifiers.apnsID(notificationID: UUID(uuidString: id)!, deviceID: "device-\(index % deviceCount)")
            expected[apnsID.uuidString.lowercased()] = index
        }
        let doneBy = ContinuousClock.now.advanced(by: .seconds(180))
        while ContinuousClock.now < doneBy {
            let accepted = recorder.acceptedCounts
            if expected.keys.allSatisfy({ accepted[$0] != nil }) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(try await gateway.terminate() == 0)

        let accepted = recorder.acceptedCounts
        let missing = expected.keys.filter { accepted[$0] == nil }
        #expect(missing.isEmpty, "\(missing.count) notifications never reached the emulator; log:\n\(GatewayProcess.tail(logPath))")
        // Nothing the backend did not ask for: a retried request was not queued a second time.
        #expect(Set(accepted.keys) == Set(expected.keys))
        let duplicates = accepted.values.reduce(0) { $0 + max(0, $1 - 1) }
        #expect(duplicates <= maxConcurrentSends, "\(duplicates) duplicates: more than the sends in flight at the kill")

        // Each copy the emulator accepted is byte-identical for its apns-id, with one collapse id (the
        // notification's id), and opens on its device to the content of the request that created it.
        var copies: [String: Set<[UInt8]>] = [:]
        var collapse: [String: Set<String>] = [:]
        var opened = 0
        for number in 0..<deviceCount {
            for received in recorder.notifications(for: GatewayWithEmulator.token(number)) {
                let apnsID = received.apnsID.lowercased()
                copies[apnsID, default: []].insert(received.body)
                collapse[apnsID, default: []].insert(received.collapseID ?? "")
                guard let index = expected[apnsID] else { continue }
                let content = try setup.open(received.body, with: rings[number])
                #expect(content.body == "kill test \(index)")
                #expect(received.collapseID == ids[index]!)  // the API's default collapse id is the notification id
                opened += 1
            }
        }
        #expect(copies.count == total)
        #expect(copies.values.allSatisfy { $0.count == 1 })
        #expect(collapse.values.allSatisfy { $0.count == 1 })
        #expect(opened == total + duplicates)

        // The database agrees: every job sent, none left queued.
        let store = try SQLiteGatewayStore(path: setup.databasePath)
        #expect(try await store.queueDepth().total == 0)
        var notSent = 0
        for id in Set(ids.values) {
            let status = try await store.notificationStatus(appID: GatewayWithEmulator.appID, notificationID: UUID(uuidString: id)!)
            if status?.deliveries.first?.state != .sent { notSent += 1 }
        }
        try await store.close()
        #expect(notSent == 0)
        print(
            "kill -9: \(total) notifications; killed with \(acceptedAtKill) accepted by the emulator and "
                + "\(acknowledgedAtKill) acknowledged by the API; \(backend.retried.withLock { $0 }) requests retried "
                + "(\(backend.replayed.withLock { $0 }) answered as idempotent replays); \(duplicates) duplicates "
                + "(limit \(maxConcurrentSends)), each an identical copy; the \(leasedAPNsIDs.count) jobs the dead "
                + "process held were all sent again \(takenBackIn) after the restart")
    }
}
