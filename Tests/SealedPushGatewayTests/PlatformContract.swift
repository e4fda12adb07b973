import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushServer
import Testing

/// Store contract (issue 18 §4): apps with FCM credentials, devices on two platforms, jobs that carry their
/// platform's body. Run on every store by SQLiteStoreTests and PostgresStoreTests.
enum PlatformContract {
    static let now = StoreFixtures.now
    static let fcmToken = "fTok3nAbCdEf0123456789:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8k"

    /// FCM credentials are stored with the app, and removed with a put that has none.
    static func appsKeepFCMCredentials(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, _ in
            #expect(try await store.app(id: "alpha")?.fcm == nil)
            var app = StoreFixtures.app("alpha")
            app.fcm = FCMAppCredentials(
                projectID: "alpha-project", serviceAccountPath: "/etc/sealed-push/alpha-fcm.json",
                applicationID: "com.example.alpha.android")
            try await store.putApp(app, now: now)
            #expect(try await store.app(id: "alpha") == app)
            #expect(try await store.apps().first { $0.id == "alpha" }?.fcm == app.fcm)
            app.fcm = nil
            try await store.putApp(app, now: now)
            #expect(try await store.app(id: "alpha")?.fcm == nil)
        }
    }

    /// An FCM device is stored and read back as one, its registration saying so; its job is claimed with its FCM
    /// address and envelope body; a device that moves between platforms takes its new address.
    static func devicesOnBothPlatforms(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let (androidKey, androidRegistration) = try StoreFixtures.registration()
            let put = try await store.putDevice(
                appID: "alpha", deviceID: "android", address: .fcm(token: fcmToken), registration: androidRegistration,
                userID: "ana", now: now)
            #expect(put.created)
            let (iphoneKey, _) = try StoreFixtures.registration()
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "iphone", apnsToken: StoreFixtures.token(1), environment: .production,
                registration: try StoreFixtures.registration().1, userID: "ana", now: now)
            let android = try #require(try await store.device(appID: "alpha", deviceID: "android"))
            #expect(android.address == .fcm(token: fcmToken))
            #expect(android.apnsToken == nil && android.environment == nil)
            #expect(android.registration.platform == .fcm && android.registration.fcmToken == fcmToken)
            #expect(android.registration.publicKey == androidRegistration.publicKey)
            let iphone = try #require(try await store.device(appID: "alpha", deviceID: "iphone"))
            #expect(iphone.address == .apns(token: StoreFixtures.token(1), environment: .production))
            #expect(iphone.registration.platform == .apns && iphone.registration.fcmToken == nil)
            #expect(Set(try await store.devices(appID: "alpha", userIDs: ["ana"]).map(\.address.platform)) == [.apns, .fcm])

            // One notification to both: each job carries its platform's body.
            let id = UUID()
            let fcmSealer = try Sealer(identity: fixtures.identity, topic: "com.example.alpha.android")
            let envelope = try fcmSealer.seal(NotificationContent(body: "hi"), to: androidKey, ttl: 3600, now: UInt64(now.timeIntervalSince1970)).envelope
            let apnsBody = try fixtures.sealer.seal(NotificationContent(body: "hi"), to: iphoneKey, ttl: 3600, now: UInt64(now.timeIntervalSince1970)).payload
            _ = try await store.enqueue(
                NewNotification(
                    id: id, appID: "alpha", idempotencyKey: nil, priority: 10, collapseID: id.uuidString.lowercased(),
                    createdAt: now, expiresAt: now.addingTimeInterval(3600),
                    jobs: [
                        NewNotification.Job(deviceID: "android", body: try SealedBody(fcmEnvelopeText: Base64URL.encode(envelope))),
                        NewNotification.Job(deviceID: "iphone", body: try SealedBody(apnsBody: apnsBody)),
                    ]))
            let claimed = try await store.claim(owner: "gw/1", limit: 10, leaseDuration: .seconds(90), now: now)
            let androidJob = try #require(claimed.first { $0.deviceID == "android" })
            let iphoneJob = try #require(claimed.first { $0.deviceID == "iphone" })
            #expect(androidJob.address == .fcm(token: fcmToken) && androidJob.body.platform == .fcm)
            #expect(androidJob.body.envelopeText == Base64URL.encode(envelope))
            #expect(iphoneJob.address.platform == .apns && iphoneJob.body.platform == .apns)
            #expect(iphoneJob.body.bytes == apnsBody)

            // An FCM unregistration marks the device only while its token is the job's.
            #expect(try await store.finish(jobID: androidJob.id, owner: "gw/1", outcome: .unregistered(reason: "unregistered"), now: now))
            #expect(try await store.device(appID: "alpha", deviceID: "android")?.unregisteredAt != nil)

            // The same FCM token registered by another device id moves to it; the device moving to APNs changes
            // platform.
            let moved = try await store.putDevice(
                appID: "alpha", deviceID: "android-2", address: .fcm(token: fcmToken),
                registration: try StoreFixtures.registration().1, userID: nil, now: now)
            #expect(moved.tokenTakenFrom.isEmpty)  // the first is already unregistered
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "android", address: .fcm(token: fcmToken + "x"),
                registration: try StoreFixtures.registration().1, userID: nil, now: now)
            let third = try await store.putDevice(
                appID: "alpha", deviceID: "android-3", address: .fcm(token: fcmToken),
                registration: try StoreFixtures.registration().1, userID: nil, now: now)
            #expect(third.tokenTakenFrom == ["android-2"])
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "android-3", apnsToken: StoreFixtures.token(9), environment: .sandbox,
                registration: try StoreFixtures.registration().1, userID: nil, now: now)
            let switched = try #require(try await store.device(appID: "alpha", deviceID: "android-3"))
            #expect(switched.address == .apns(token: StoreFixtures.token(9), environment: .sandbox))
            #expect(switched.registration.platform == .apns)
        }
    }

    /// Expiry counts the jobs it ends by the platform of their device (for `failed_total{platform,reason="Expired"}`).
    static func expiryCountsByPlatform(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let (androidKey, androidRegistration) = try StoreFixtures.registration()
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "android", address: .fcm(token: fcmToken), registration: androidRegistration,
                userID: nil, now: now)
            let iphones = try await StoreFixtures.register(["a", "b"], in: "alpha", store)
            let fcmSealer = try Sealer(identity: fixtures.identity, topic: "com.example.alpha.android")
            func fcmBody(ttl: Double) throws -> SealedBody {
                let envelope = try fcmSealer.seal(
                    NotificationContent(body: "hi"), to: androidKey, ttl: UInt64(ttl), now: UInt64(now.timeIntervalSince1970)
                ).envelope
                return try SealedBody(fcmEnvelopeText: Base64URL.encode(envelope))
            }
            for ttl in [60.0, 3600] {
                let short = try fixtures.notification(appID: "alpha", to: iphones, ttl: ttl)
                _ = try await store.enqueue(
                    NewNotification(
                        id: short.id, appID: "alpha", idempotencyKey: nil, priority: 10, collapseID: nil,
                        createdAt: now, expiresAt: now.addingTimeInterval(ttl),
                        jobs: short.jobs + [NewNotification.Job(deviceID: "android", body: try fcmBody(ttl: ttl))]))
            }
            #expect(try await store.expireOverdue(now: now.addingTimeInterval(30)).isEmpty)
            #expect(try await store.expireOverdue(now: now.addingTimeInterval(60)) == [.apns: 2, .fcm: 1])
            #expect(try await store.expireOverdue(now: now.addingTimeInterval(61)).isEmpty)
            #expect(try await store.expireOverdue(now: now.addingTimeInterval(3600)) == [.apns: 2, .fcm: 1])
        }
    }

    /// Plaintext never passes as an FCM body: a JSON object, text that is not base64url, or an envelope that does
    /// not parse are refused.
    static func fcmBodiesMustBeSealed() throws {
        for text in [#"{"sp":"AQ"}"#, "hello there, this is a plain message", "", "AAAA"] {
            #expect(throws: GatewayStoreError.self) { try SealedBody(fcmEnvelopeText: text) }
        }
    }
}
