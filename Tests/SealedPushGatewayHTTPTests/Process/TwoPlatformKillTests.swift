import Foundation
import SealedPushAPNsEmulator
import SealedPushClient
import SealedPushCore
import SealedPushFCMEmulator
import SealedPushGateway
import SealedPushServer
import Testing

/// The real `sealed-push-gateway serve` delivering to the APNs emulator and the FCM emulator at once (issue 18 §4),
/// killed with `kill -9` mid-run and started again.
@Suite("Gateway process: two platforms and kill -9", .serialized)
struct TwoPlatformKillTests {
    static let androidApp = "com.example.shop.android"
    static let project = "shop-fcm"

    static func fcmToken(_ number: Int) -> String {
        "shop\(number)Tok3n:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8k"
    }

    /// `kill -9` the gateway while it accepts and delivers 10,000 notifications, half to iPhones and half to Android
    /// phones, then start it again; the backend retries unanswered requests with the same `Idempotency-Key`. Every
    /// notification reaches its platform's emulator and opens on its device to its own content; none is created
    /// twice; duplicates (sends in flight at the kill) stay within `maxConcurrentSends` and are identical copies.
    @Test func killDashNineLosesNothingOnEitherPlatform() async throws {
        let total = 10_000
        let perPlatform = 20
        let maxConcurrentSends = 64
        let (setup, fcm, environment) = try await Self.startBothEmulators(fcmFaults: .none)
        defer { setup.removeFiles(); Task { await setup.stop(); await fcm.stop() } }
        try setup.setDelivery([
            "apnsDeadlineSeconds": 5, "requestTimeoutSeconds": 5, "leaseSeconds": 15,
            "maxConcurrentSends": maxConcurrentSends,
        ])
        let logPath = setup.directory.appendingPathComponent("serve.log").path
        var gateway = try await GatewayProcess.start(config: setup.configPath, environment: environment, logPath: logPath)
        let first = HTTPTestClient(port: gateway.port)
        var iphones: [DeviceKeyRing] = []
        var androids: [DeviceKeyRing] = []
        for number in 0..<perPlatform {
            iphones.append(try await setup.register(number, client: first))
            androids.append(try await Self.registerAndroid(number, setup: setup, client: first))
        }
        // Notification i goes to an iPhone when i is even, to an Android phone when odd.
        @Sendable func device(_ index: Int) -> String {
            index % 2 == 0 ? "device-\((index / 2) % perPlatform)" : "android-\((index / 2) % perPlatform)"
        }

        let backend = RetryingBackend(first: first)
        let current = backend.current
        let acknowledged = backend.acknowledged
        let senders = backend.start(total: total, path: "/v1/apps/\(GatewayWithEmulator.appID)/notifications", key: setup.apiKey) {
            ["devices": [device($0)], "content": ["body": "kill test \($0)"]]
        }

        // Kill once 3,000 were accepted by the two emulators together while the API is still accepting.
        let apns = setup.emulator.recorder
        let fcmRecorder = fcm.recorder
        let killBy = ContinuousClock.now.advanced(by: .seconds(180))
        while apns.totalAccepted + fcmRecorder.totalAccepted < 3_000, ContinuousClock.now < killBy {
            try await Task.sleep(for: .milliseconds(20))
        }
        let acceptedAtKill = (apns: apns.totalAccepted, fcm: fcmRecorder.totalAccepted)
        current.withLock { $0 = nil }
        try await gateway.killNow()
        #expect(acceptedAtKill.apns > 0 && acceptedAtKill.fcm > 0, "\(acceptedAtKill)")
        #expect(acknowledged.withLock { $0.count } < total, "the kill came after the API had accepted everything")

        gateway = try await GatewayProcess.start(config: setup.configPath, environment: environment, logPath: logPath)
        current.withLock { $0 = HTTPTestClient(port: gateway.port) }
        try await senders.value
        let ids = acknowledged.withLock { $0 }
        #expect(ids.count == total)
        #expect(Set(ids.values).count == total)

        // Wait until every notification reached its platform: APNs by apns-id; FCM by count of distinct envelopes.
        var expectedAPNs: [String: Int] = [:]
        for (index, id) in ids where index % 2 == 0 {
            let apnsID = DeliveryIdentifiers.apnsID(notificationID: UUID(uuidString: id)!, deviceID: device(index))
            expectedAPNs[apnsID.uuidString.lowercased()] = index
        }
        let doneBy = ContinuousClock.now.advanced(by: .seconds(180))
        while ContinuousClock.now < doneBy {
            let apnsDone = expectedAPNs.keys.allSatisfy { apns.acceptedCounts[$0] != nil }
            let fcmDone = fcmRecorder.totalAccepted - fcmRecorder.duplicateAcceptances >= total / 2
            if apnsDone && fcmDone { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(try await gateway.terminate() == 0)

        // APNs: every iPhone notification, each copy identical and opening to its own content.
        let apnsAccepted = apns.acceptedCounts
        #expect(Set(apnsAccepted.keys) == Set(expectedAPNs.keys), "log:\n\(GatewayProcess.tail(logPath))")
        var apnsCopies: [String: Set<[UInt8]>] = [:]
        for number in 0..<perPlatform {
            for received in apns.notifications(for: GatewayWithEmulator.token(number)) {
                let apnsID = received.apnsID.lowercased()
                apnsCopies[apnsID, default: []].insert(received.body)
                let index = try #require(expectedAPNs[apnsID])
                #expect(try setup.open(received.body, with: iphones[number]).body == "kill test \(index)")
            }
        }
        #expect(apnsCopies.values.allSatisfy { $0.count == 1 })
        let apnsDuplicates = apnsAccepted.values.reduce(0) { $0 + max(0, $1 - 1) }

        // FCM: every Android notification, opened on its phone (bound to the Android application id) to its content.
        var fcmIndices: [Int: Int] = [:]
        let now = UInt64(Date().timeIntervalSince1970)
        for number in 0..<perPlatform {
            let opener = try EnvelopeOpener(
                keyRing: androids[number], serverPublicKeys: [setup.identity.publicKey], topic: Self.androidApp)
            for message in fcmRecorder.messages(for: Self.fcmToken(number)) {
                #expect(!message.hasNotification && message.dataKeys == ["sp"])
                let envelope = try Base64URL.decode(try #require(message.data["sp"]))
                let body = try opener.open(envelope: envelope, now: now).content.body ?? ""
                let index = try #require(Int(body.dropFirst("kill test ".count)))
                #expect(device(index) == "android-\(number)")
                fcmIndices[index, default: 0] += 1
            }
        }
        let expectedFCM = Set(ids.keys.filter { $0 % 2 == 1 })
        #expect(Set(fcmIndices.keys) == expectedFCM, "\(expectedFCM.subtracting(fcmIndices.keys).count) Android notifications missing")
        let fcmDuplicates = fcmIndices.values.reduce(0) { $0 + max(0, $1 - 1) }
        #expect(fcmRecorder.duplicateAcceptances == fcmDuplicates, "a resend was not a byte-identical copy")
        #expect(apnsDuplicates + fcmDuplicates <= maxConcurrentSends, "\(apnsDuplicates) + \(fcmDuplicates) duplicates")

        let store = try SQLiteGatewayStore(path: setup.databasePath)
        #expect(try await store.queueDepth().total == 0)
        try await store.close()
        print(
            "kill -9 on two platforms: \(total) notifications; killed with \(acceptedAtKill.apns) accepted by APNs and "
                + "\(acceptedAtKill.fcm) by FCM; duplicates \(apnsDuplicates) (APNs) + \(fcmDuplicates) (FCM), limit "
                + "\(maxConcurrentSends), each an identical copy")
    }

    /// 10 % faults at FCM (429 with `Retry-After`, 500, 503, connection resets) through the real
    /// `sealed-push-gateway serve`: every Android notification reaches FCM and opens to its own content, resends are
    /// identical copies, and `/metrics` counts FCM's requests, faults and sends under `platform="fcm"` (the APNs side
    /// of the same process stays at zero retries).
    @Test func fcmFaultsLoseNothingThroughTheServeBinary() async throws {
        let total = 1_000
        let phones = 20
        // A reset drops every request in flight on the connection (up to 32 here), not just one: 1 % of them is
        // already a storm of lost connections.
        let faults = EmulatorFaultPlan(random: [
            .init(.status(429, reason: "QUOTA_EXCEEDED"), probability: 0.03),
            .init(.status(500, reason: "INTERNAL"), probability: 0.03),
            .init(.status(503, reason: "UNAVAILABLE"), probability: 0.03),
            .init(.connectionReset, probability: 0.01),
        ])
        let (setup, fcm, environment) = try await Self.startBothEmulators(fcmFaults: faults)
        defer { setup.removeFiles(); Task { await setup.stop(); await fcm.stop() } }
        // Job retries every 1-5 s, up to 20 tries: with 5 s doubling to 5 min, a job that drew four faults in a row
        // was next tried after the 180 s this test waits (one of 1,000 did so in a CI run).
        try setup.setDelivery([
            "apnsDeadlineSeconds": 5, "requestTimeoutSeconds": 5, "leaseSeconds": 15, "maxConcurrentSends": 32,
            "retryInitialSeconds": 1, "retryMaxSeconds": 5, "retryAttempts": 20,
        ])
        let logPath = setup.directory.appendingPathComponent("serve.log").path
        let gateway = try await GatewayProcess.start(config: setup.configPath, environment: environment, logPath: logPath)
        let client = HTTPTestClient(port: gateway.port)
        var androids: [DeviceKeyRing] = []
        for number in 0..<phones {
            androids.append(try await Self.registerAndroid(number, setup: setup, client: client))
        }
        _ = try await setup.register(0, client: client)

        let started = ContinuousClock.now
        let backend = RetryingBackend(first: client)
        try await backend.start(total: total, path: "/v1/apps/\(GatewayWithEmulator.appID)/notifications", key: setup.apiKey) {
            ["devices": ["android-\($0 % phones)"], "content": ["body": "fault test \($0)"]]
        }.value
        // One notification to the iPhone too: the APNs series of the same process must exist and show no retries.
        let toIPhone = try await client.send(
            "POST", "/v1/apps/\(GatewayWithEmulator.appID)/notifications", key: setup.apiKey,
            json: ["devices": ["device-0"], "content": ["body": "to the iPhone"]])
        #expect(toIPhone.status == 202, "\(toIPhone.text)")
        #expect(backend.acknowledged.withLock { $0.count } == total)
        let acceptedIn = started.duration(to: .now)

        let recorder = fcm.recorder
        let doneBy = ContinuousClock.now.advanced(by: .seconds(180))
        var metrics = ""
        while ContinuousClock.now < doneBy {
            metrics = try await client.send("GET", "/metrics").text
            if OperationsTests.sum("sealedpush_gateway_sent_total", in: metrics) >= Double(total + 1) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let deliveredIn = started.duration(to: .now)
        func series(_ name: String, _ platform: String) -> Double {
            OperationsTests.sum(name, labels: ["platform": platform], in: metrics)
        }
        #expect(series("sealedpush_gateway_sent_total", "fcm") == Double(total), "log:\n\(GatewayProcess.tail(logPath))")
        #expect(series("sealedpush_gateway_sent_total", "apns") == 1)
        #expect(series("sealedpush_gateway_retries_total", "apns") == 0)
        let injected = recorder.faultsInjected.values.reduce(0, +)
        #expect(injected > 0, "no fault was injected: the test proves nothing")
        // Every injected fault is one failed request the gateway saw (a reset may fail other requests in flight too).
        #expect(series("sealedpush_gateway_retries_total", "fcm") >= Double(injected))
        #expect(series("sealedpush_gateway_provider_requests_total", "fcm") >= Double(recorder.totalRequests))
        #expect(try await gateway.terminate() == 0)

        var opened: [Int: Int] = [:]
        let now = UInt64(Date().timeIntervalSince1970)
        for number in 0..<phones {
            let opener = try EnvelopeOpener(
                keyRing: androids[number], serverPublicKeys: [setup.identity.publicKey], topic: Self.androidApp)
            var copies: [Int: Set<String>] = [:]
            for message in recorder.messages(for: Self.fcmToken(number)) {
                let text = try #require(message.data["sp"])
                let body = try opener.open(envelope: try Base64URL.decode(text), now: now).content.body ?? ""
                let index = try #require(Int(body.dropFirst("fault test ".count)))
                #expect(index % phones == number)
                opened[index, default: 0] += 1
                copies[index, default: []].insert(text)
            }
            #expect(copies.values.allSatisfy { $0.count == 1 }, "a resend was not an identical copy")
        }
        #expect(Set(opened.keys) == Set(0..<total), "\(Set(0..<total).subtracting(opened.keys).count) notifications never reached FCM")
        #expect(setup.emulator.recorder.notifications(for: GatewayWithEmulator.token(0)).count == 1)
        print(
            "10 % FCM faults through serve: \(total) notifications (API accepted all in \(acceptedIn), delivered in "
                + "\(deliveredIn)), \(injected) faults injected, "
                + "\(recorder.totalRequests) FCM requests, \(recorder.duplicateAcceptances) duplicate acceptances, none lost; "
                + "the gateway's retries: "
                + metrics.split(separator: "\n").filter { $0.hasPrefix("sealedpush_gateway_retries_total{") }.joined(separator: ", "))
    }

    /// The APNs emulator and the gateway's files (`GatewayWithEmulator`), plus an FCM emulator trusting a fresh
    /// service account that `app set-fcm` gives the app; returns the environment that points `serve` at both.
    static func startBothEmulators(
        fcmFaults: EmulatorFaultPlan
    ) async throws -> (GatewayWithEmulator, FCMEmulator, [String: String]) {
        let setup = try await GatewayWithEmulator.start {
            $0.recordedNotificationsPerToken = 1_000
            $0.recordedNotificationsLimit = 50_000
        }
        do {
            let accountPath = setup.directory.appendingPathComponent("fcm-account.json").path
            let fcm = try await FCMEmulator.startTrustingNewAccount(writingAccountTo: accountPath, projectID: project) {
                $0.recordedMessagesLimit = 50_000
                $0.faults = fcmFaults
            }
            do {
                let fcmTrust = setup.directory.appendingPathComponent("fcm.pem").path
                try Data(fcm.certificatePEM.utf8).write(to: URL(fileURLWithPath: fcmTrust))
                let setFCM = try GatewayExecutableTests.run([
                    "app", "set-fcm", "--config", setup.configPath, "--app-id", GatewayWithEmulator.appID,
                    "--service-account", accountPath, "--android-app-id", androidApp,
                ])
                #expect(setFCM.status == 0, "\(setFCM.stderr)")
                var environment = setup.environment
                environment["SEALEDPUSH_GATEWAY_FCM_URL"] = "https://127.0.0.1:\(fcm.port)"
                environment["SEALEDPUSH_GATEWAY_FCM_TRUST"] = fcmTrust
                return (setup, fcm, environment)
            } catch {
                await fcm.stop()
                throw error
            }
        } catch {
            setup.removeFiles()
            await setup.stop()
            throw error
        }
    }

    /// Registers Android phone `number` (`android-NUMBER`, FCM token `fcmToken(number)`) with a fresh key ring.
    static func registerAndroid(_ number: Int, setup: GatewayWithEmulator, client: HTTPTestClient) async throws -> DeviceKeyRing {
        let ring = SealedPushClientRing.fresh()
        var body = GatewayTestServer.deviceBody(ring.registration())
        body["apnsToken"] = nil
        body["environment"] = nil
        body["platform"] = "fcm"
        body["fcmToken"] = fcmToken(number)
        let answer = try await client.send(
            "PUT", "/v1/apps/\(GatewayWithEmulator.appID)/devices/android-\(number)", key: setup.apiKey, json: body)
        #expect(answer.status == 201, "\(answer.text)")
        return ring
    }
}
