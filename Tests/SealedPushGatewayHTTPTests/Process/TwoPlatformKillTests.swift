import Foundation
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
        let setup = try await GatewayWithEmulator.start {
            $0.recordedNotificationsPerToken = 1_000
            $0.recordedNotificationsLimit = 50_000
        }
        defer { Task { await setup.stop() } }

        // FCM: an emulator trusting a fresh service account; the app gets it through the operator command.
        let accountPath = setup.directory.appendingPathComponent("fcm-account.json").path
        let publicKey = try FCMServiceAccount.writeTestAccount(
            to: accountPath, projectID: Self.project, tokenURI: "https://127.0.0.1:1/token")
        var fcmConfiguration = FCMEmulatorConfiguration(accounts: [
            .init(clientEmail: "sealedpush@\(Self.project).iam.gserviceaccount.com", publicKeyPEM: publicKey, projectID: Self.project)
        ])
        fcmConfiguration.recordedMessagesLimit = 50_000
        let fcm = try FCMEmulator(configuration: fcmConfiguration)
        try await fcm.start()
        defer { Task { await fcm.stop() } }
        var account = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: accountPath))) as! [String: Any]
        account["token_uri"] = fcm.tokenURI
        try FileManager.default.removeItem(atPath: accountPath)
        FileManager.default.createFile(
            atPath: accountPath, contents: try JSONSerialization.data(withJSONObject: account), attributes: [.posixPermissions: 0o600])
        let fcmTrust = setup.directory.appendingPathComponent("fcm.pem").path
        try Data(fcm.certificatePEM.utf8).write(to: URL(fileURLWithPath: fcmTrust))
        let setFCM = try GatewayExecutableTests.run([
            "app", "set-fcm", "--config", setup.configPath, "--app-id", GatewayWithEmulator.appID,
            "--service-account", accountPath, "--android-app-id", Self.androidApp,
        ])
        #expect(setFCM.status == 0, "\(setFCM.stderr)")
        var environment = setup.environment
        environment["SEALEDPUSH_GATEWAY_FCM_URL"] = "https://127.0.0.1:\(fcm.port)"
        environment["SEALEDPUSH_GATEWAY_FCM_TRUST"] = fcmTrust

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
            let ring = SealedPushClientRing.fresh()
            var body = GatewayTestServer.deviceBody(ring.registration())
            body["apnsToken"] = nil
            body["environment"] = nil
            body["platform"] = "fcm"
            body["fcmToken"] = Self.fcmToken(number)
            let answer = try await first.send(
                "PUT", "/v1/apps/\(GatewayWithEmulator.appID)/devices/android-\(number)", key: setup.apiKey, json: body)
            #expect(answer.status == 201, "\(answer.text)")
            androids.append(ring)
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
}
