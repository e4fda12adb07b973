import Foundation
import MetricsTestKit
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushFCM
import SealedPushFCMEmulator
import SealedPushGateway
import SealedPushProxyTestSupport
import SealedPushServer
import Testing

/// Delivery contract (issue 18 §4): one delivery service, two platforms — the APNs emulator and the FCM emulator on
/// loopback at once, each behind its provider, with the same lease, retry and unregistered rules. Run on every store.
enum PlatformDeliveryContract {
    static let project = "alpha-fcm"
    static let androidApp = "com.example.alpha.android"

    /// An FCM registration token for a device number (FCM's shape: letters, digits, `:`, `-`, `_`).
    static func fcmToken(_ number: Int) -> String { "fcm\(number)-Tok3n:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0q" }

    /// The FCM emulator trusting a fresh service account whose file (0600) names the emulator as its token URI.
    struct FCMSide {
        let emulator: FCMEmulator
        let accountPath: String

        static func start(in directory: URL, _ configure: (inout FCMEmulatorConfiguration) -> Void = { _ in }) async throws
            -> FCMSide
        {
            let accountPath = directory.appendingPathComponent("fcm-service-account.json").path
            let emulator = try await FCMEmulator.startTrustingNewAccount(
                writingAccountTo: accountPath, projectID: project, logger: DeliveryFixture.quietLogger("fcm-emulator")
            ) { configuration in
                configuration.retryAfterSeconds = 0
                configure(&configuration)
            }
            return FCMSide(emulator: emulator, accountPath: accountPath)
        }

        /// The app's FCM credentials pointing at this account.
        var credentials: FCMAppCredentials {
            FCMAppCredentials(projectID: project, serviceAccountPath: accountPath, applicationID: androidApp)
        }

        /// A delivery configuration that sends FCM jobs to this emulator.
        func configure(_ configuration: inout DeliveryConfiguration) {
            configuration.fcmEndpoint = FCMEndpoint(
                host: "127.0.0.1", port: emulator.port, trustedCertificatePEM: emulator.certificatePEM)
            configuration.fcmRetry = FCMRetryPolicy(
                maxAttempts: 3, maxTotal: .seconds(10), initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(50))
            configuration.fcmRequestTimeout = .seconds(5)
        }
    }

    /// Runs `body` with the APNs delivery fixture, an FCM emulator, the app's FCM credentials stored, and a sealer
    /// bound to the Android application id.
    static func withBothPlatforms(
        _ harness: any StoreHarness, fcm configureFCM: (inout FCMEmulatorConfiguration) -> Void = { _ in },
        _ body: (inout DeliveryFixture, FCMSide, Sealer) async throws -> Void
    ) async throws {
        try await withDeliveryFixture(harness) { fixture in
            let fcm = try await FCMSide.start(in: fixture.directory, configureFCM)
            do {
                var app = try #require(try await fixture.store.app(id: DeliveryFixture.appID))
                app.fcm = fcm.credentials
                try await fixture.store.putApp(app, now: Date())
                let androidSealer = try Sealer(identity: fixture.sealer.identity, topic: androidApp)
                try await body(&fixture, fcm, androidSealer)
            } catch {
                await fcm.emulator.stop()
                throw error
            }
            await fcm.emulator.stop()
        }
    }

    /// Registers Android devices `android-0` … and returns their keys.
    static func registerAndroid(_ count: Int, _ store: any GatewayStore) async throws -> [String: DevicePublicKey] {
        var keys: [String: DevicePublicKey] = [:]
        for number in 0..<count {
            let (key, registration) = try StoreFixtures.registration(createdAt: Date())
            _ = try await store.putDevice(
                appID: DeliveryFixture.appID, deviceID: "android-\(number)", address: .fcm(token: fcmToken(number)),
                registration: registration, userID: "user-\(number)", now: Date())
            keys["android-\(number)"] = key
        }
        return keys
    }

    /// One notification's job for each Android device: the envelope text sealed to its key.
    static func androidJobs(_ keys: [String: DevicePublicKey], _ sealer: Sealer) throws -> [NewNotification.Job] {
        try keys.keys.sorted().map { deviceID in
            let sealed = try sealer.seal(
                NotificationContent(body: "android \(UUID())"), to: keys[deviceID]!, ttl: 3600,
                now: UInt64(Date().timeIntervalSince1970))
            return NewNotification.Job(
                deviceID: deviceID, body: try SealedBody(fcmEnvelopeText: Base64URL.encode(sealed.envelope)))
        }
    }

    /// `DeliveryConfiguration.proxy`: the node's APNs and FCM connections (FCM's token endpoint's too) all go through
    /// one HTTP proxy's tunnels, and both jobs are sent.
    static func bothPlatformsGoThroughTheProxy(_ harness: any StoreHarness) async throws {
        let proxy = try await ConnectProxy()
        try await withBothPlatforms(harness) { fixture, fcm, androidSealer in
            let iphones = try await fixture.registerDevices(1)
            let androids = try await registerAndroid(1, fixture.store)
            let apnsSealed = try fixture.sealer.seal(
                NotificationContent(body: "through the proxy"), to: fixture.keys[iphones[0]]!, ttl: 3600,
                now: UInt64(Date().timeIntervalSince1970))
            let notification = NewNotification(
                appID: DeliveryFixture.appID, priority: 10, collapseID: nil, createdAt: Date(),
                expiresAt: Date().addingTimeInterval(3600),
                jobs: [
                    NewNotification.Job(deviceID: iphones[0], body: try SealedBody(apnsBody: apnsSealed.payload)),
                    try androidJobs(androids, androidSealer)[0],
                ])
            _ = try await fixture.store.enqueue(notification)
            var configuration = fixture.configuration()
            fcm.configure(&configuration)
            configuration.proxy = try ProviderProxy(url: "http://127.0.0.1:\(proxy.port)")
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"))
            let store = fixture.store
            #expect(try await runServices([service]) { try await store.queueIsEmpty() })
            let deliveries = try await fixture.deliveries(notification.id)
            #expect(deliveries[iphones[0]]?.state == .sent)
            #expect(deliveries["android-0"]?.state == .sent)
            #expect(fixture.emulator.recorder.totalAccepted == 1)
            #expect(fcm.emulator.recorder.messages(for: fcmToken(0)).count == 1)
            #expect(
                Set(proxy.requests.map(\.target))
                    == ["127.0.0.1:\(fixture.emulator.port)", "127.0.0.1:\(fcm.emulator.port)"])
            #expect(proxy.requests.allSatisfy { $0.opened })
        }
        await proxy.stop()
    }

    /// A user with an iPhone and an Android phone gets one notification on each, each in its platform's form:
    /// the APNs body byte for byte at APNs; at FCM a data-only message whose `sp` is the job's envelope, high
    /// priority, a ttl, no collapse key for a notification without the sender's collapse id, no notification block.
    static func iPhoneAndAndroidEachGetOne(_ harness: any StoreHarness) async throws {
        try await withBothPlatforms(harness) { fixture, fcm, androidSealer in
            let iphones = try await fixture.registerDevices(1)
            let androids = try await registerAndroid(1, fixture.store)
            let apnsSealed = try fixture.sealer.seal(
                NotificationContent(body: "to the iPhone"), to: fixture.keys[iphones[0]]!, ttl: 3600,
                now: UInt64(Date().timeIntervalSince1970))
            let androidJob = try androidJobs(androids, androidSealer)[0]
            let notification = NewNotification(
                appID: DeliveryFixture.appID, priority: 10, collapseID: nil, createdAt: Date(),
                expiresAt: Date().addingTimeInterval(3600),
                jobs: [NewNotification.Job(deviceID: iphones[0], body: try SealedBody(apnsBody: apnsSealed.payload)), androidJob])
            _ = try await fixture.store.enqueue(notification)

            let metrics = TestMetrics()
            var configuration = fixture.configuration()
            fcm.configure(&configuration)
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"),
                metricsFactory: metrics)
            let store = fixture.store
            #expect(try await runServices([service]) { try await store.queueIsEmpty() })

            #expect(fixture.emulator.recorder.totalAccepted == 1)
            let recorded = fcm.emulator.recorder.messages(for: fcmToken(0))
            #expect(recorded.count == 1)
            let message = try #require(recorded.first)
            #expect(message.data == ["sp": androidJob.body.envelopeText])
            #expect(!message.hasNotification)
            #expect(message.priority == "high")
            #expect(message.ttl.map { $0.hasSuffix("s") && Int($0.dropLast())! > 3500 } == true)
            #expect(message.collapseKey == nil)
            let deliveries = try await fixture.deliveries(notification.id)
            #expect(deliveries[iphones[0]]?.state == .sent)
            #expect(deliveries["android-0"]?.state == .sent)
            #expect(deliveries["android-0"]?.apnsID?.hasPrefix("projects/\(project)/messages/") == true)
            // The same metrics for both, labelled by platform.
            for platform in ["apns", "fcm"] {
                let labels = [("platform", platform)]
                #expect(metrics.counterTotal(label: "sealedpush_gateway_provider_requests_total", dimensions: labels) == 1)
                #expect(metrics.counterTotal(label: "sealedpush_gateway_sent_total", dimensions: labels) == 1)
                #expect(try metrics.expectTimer("sealedpush_gateway_send_seconds", labels).values.count == 1)
            }
        }
    }

    /// 10 % faults at FCM (429 with Retry-After, 500, 503, dropped connections): every Android notification is
    /// accepted, none lost; resends carry the same envelope (counted by the emulator as duplicates, shown once by
    /// the device's duplicate rule).
    static func fcmFaultsLoseNothing(_ harness: any StoreHarness) async throws {
        try await withBothPlatforms(
            harness,
            fcm: {
                $0.faults = EmulatorFaultPlan(random: [
                    .init(.status(429, reason: "QUOTA_EXCEEDED"), probability: 0.03),
                    .init(.status(500, reason: "INTERNAL"), probability: 0.02),
                    .init(.status(503, reason: "UNAVAILABLE"), probability: 0.03),
                    .init(.connectionReset, probability: 0.02),
                ])
            }
        ) { fixture, fcm, androidSealer in
            let keys = try await registerAndroid(40, fixture.store)
            var envelopes: Set<String> = []
            for _ in 0..<5 {
                let jobs = try androidJobs(keys, androidSealer)
                envelopes.formUnion(jobs.map(\.body.envelopeText))
                _ = try await fixture.store.enqueue(
                    NewNotification(
                        appID: DeliveryFixture.appID, priority: 5, collapseID: "backend-collapse", createdAt: Date(),
                        expiresAt: Date().addingTimeInterval(3600), jobs: jobs))
            }
            var configuration = fixture.configuration()
            fcm.configure(&configuration)
            let metrics = TestMetrics()
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"),
                metricsFactory: metrics)
            let store = fixture.store
            #expect(try await runServices([service]) { try await store.queueIsEmpty() })

            let recorder = fcm.emulator.recorder
            // Every FCM request and every fault is counted under platform "fcm", the faults by FCM's reason: each
            // request either succeeded (a job sent) or failed transiently (a retry), and every fault the emulator
            // injected failed at least its own request (a reset also fails the other requests in flight on that
            // connection, some of which the emulator never read).
            let fcmLabel = [("platform", "fcm")]
            let requests = metrics.counterTotal(label: "sealedpush_gateway_provider_requests_total", dimensions: fcmLabel)
            let retries = metrics.counterTotal(label: "sealedpush_gateway_retries_total", dimensions: fcmLabel)
            let sent = metrics.counterTotal(label: "sealedpush_gateway_sent_total", dimensions: fcmLabel)
            #expect(sent == Int64(envelopes.count))
            #expect(requests == sent + retries)
            #expect(requests >= Int64(recorder.totalRequests))
            #expect(retries >= Int64(recorder.faultsInjected.values.reduce(0, +)))
            for reason in ["quotaExceeded", "internal", "unavailable"] {
                let counted = metrics.counterTotal(label: "sealedpush_gateway_retries_total", dimensions: fcmLabel + [("reason", reason)])
                #expect(counted > 0, "no \(reason) retry counted")
            }
            #expect(metrics.counterTotal(label: "sealedpush_gateway_retries_total", dimensions: [("platform", "apns")]) == 0)
            let accepted = Set(recorder.allMessages.compactMap { $0.data["sp"] })
            #expect(accepted == envelopes, "\(envelopes.subtracting(accepted).count) envelopes never reached FCM")
            #expect(recorder.totalAccepted - recorder.duplicateAcceptances == envelopes.count)
            #expect(recorder.faultsInjected.values.reduce(0, +) > 0, "no fault was injected: the test proves nothing")
            #expect(recorder.allMessages.allSatisfy { $0.priority == "normal" && $0.collapseKey == "backend-collapse" })
        }
    }

    /// FCM's UNREGISTERED ends the job `unregistered`, marks the device (no more sends to it), and leaves the
    /// user's iPhone alone.
    static func unregisteredAndroidStopsSends(_ harness: any StoreHarness) async throws {
        try await withBothPlatforms(harness, fcm: { $0.unregisteredTokens = [fcmToken(0)] }) { fixture, fcm, androidSealer in
            let keys = try await registerAndroid(2, fixture.store)
            let notification = NewNotification(
                appID: DeliveryFixture.appID, priority: 10, collapseID: nil, createdAt: Date(),
                expiresAt: Date().addingTimeInterval(3600), jobs: try androidJobs(keys, androidSealer))
            _ = try await fixture.store.enqueue(notification)
            var configuration = fixture.configuration()
            fcm.configure(&configuration)
            let metrics = TestMetrics()
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"),
                metricsFactory: metrics)
            let store = fixture.store
            #expect(try await runServices([service]) { try await store.queueIsEmpty() })
            #expect(metrics.counterTotal(
                label: "sealedpush_gateway_failed_total", dimensions: [("platform", "fcm"), ("reason", "unregistered")]) == 1)
            let deliveries = try await fixture.deliveries(notification.id)
            #expect(deliveries["android-0"]?.state == .unregistered)
            #expect(deliveries["android-0"]?.reason == "unregistered")
            #expect(deliveries["android-1"]?.state == .sent)
            #expect(try await store.device(appID: DeliveryFixture.appID, deviceID: "android-0")?.unregisteredAt != nil)
            #expect(try await store.device(appID: DeliveryFixture.appID, deviceID: "android-1")?.unregisteredAt == nil)
        }
    }
}
