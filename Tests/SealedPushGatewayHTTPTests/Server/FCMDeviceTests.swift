import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import Testing

/// Android devices over the HTTP API (issue 18 §4): registration with `platform: fcm`, refused for an app without
/// FCM credentials; a send to a user with an iPhone and an Android phone seals once per device, each in its
/// platform's form and bound to its platform's topic.
@Suite("Gateway HTTP: FCM devices", .serialized)
struct FCMDeviceTests {
    static let androidApp = "com.example.sealedpush.android"
    static let fcmToken = "cAndr0idT0ken:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8k"

    static func fcmBody(_ registration: DeviceRegistration, token: String = fcmToken) -> [String: Any] {
        var body = GatewayTestServer.deviceBody(registration)
        body["apnsToken"] = nil
        body["environment"] = nil
        body["platform"] = "fcm"
        body["fcmToken"] = token
        return body
    }

    @Test(arguments: Backend.available)
    func androidDevicesRegisterAndReceiveTheirOwnForm(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            let ring = DeviceKeyRing.generate(now: UInt64(Date().timeIntervalSince1970))
            var body = Self.fcmBody(ring.registration())
            body["userId"] = "ana"

            // No FCM credentials yet: refused, naming what the operator must do.
            let refused = try await server.client.send("PUT", "/v1/apps/app1/devices/pixel", key: key, json: body)
            #expect(refused.status == 422)
            #expect(refused.json["code"] as? String == "fcmNotConfigured")
            #expect((refused.json["message"] as? String)?.contains("set-fcm") == true)

            var app = try #require(try await server.store.app(id: "app1"))
            app.fcm = FCMAppCredentials(
                projectID: "p", serviceAccountPath: "/nonexistent/fcm.json", applicationID: Self.androidApp)
            try await server.store.putApp(app, now: Date())
            let created = try await server.client.send("PUT", "/v1/apps/app1/devices/pixel", key: key, json: body)
            #expect(created.status == 201, "\(created.text)")
            #expect(created.json["platform"] as? String == "fcm")
            #expect(created.json["fcmToken"] as? String == String(Self.fcmToken.prefix(8)) + "…")  // never echoed whole
            #expect(created.json["apnsToken"] == nil && created.json["environment"] == nil)
            let iphoneRing = try await server.registerDevice("iphone", user: "ana")
            let iphone = try await server.client.send("GET", "/v1/apps/app1/devices/iphone", key: key)
            #expect(iphone.json["platform"] as? String == "apns")

            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key,
                json: ["users": ["ana"], "content": ["title": "Dinner", "body": "Table for two at 19:30"]])
            #expect(sent.status == 202, "\(sent.text)")
            #expect(sent.json["devices"] as? Int == 2)
            let jobs = try await server.store.claim(owner: "t", limit: 10, leaseDuration: .seconds(60), now: Date())
            let android = try #require(jobs.first { $0.deviceID == "pixel" })
            let apple = try #require(jobs.first { $0.deviceID == "iphone" })
            #expect(android.address == .fcm(token: Self.fcmToken) && android.body.platform == .fcm)
            #expect(apple.body.platform == .apns)
            // What the store holds for Android is the envelope only: no placeholder, no content in clear.
            #expect(!android.body.envelopeText.contains("Table"))
            // Each opens on its device, bound to its platform's topic; the other topic refuses it.
            let envelope = try Base64URL.decode(android.body.envelopeText)
            let now = UInt64(Date().timeIntervalSince1970)
            let publicKeys = [server.identities["app1"]!.publicKey]
            let opened = try EnvelopeOpener(keyRing: ring, serverPublicKeys: publicKeys, topic: Self.androidApp)
                .open(envelope: envelope, now: now)
            #expect(opened.content.body == "Table for two at 19:30")
            #expect(throws: SealedPushError.self) {
                try EnvelopeOpener(keyRing: ring, serverPublicKeys: publicKeys, topic: GatewayTestServer.topic)
                    .open(envelope: envelope, now: now)
            }
            #expect(try server.open(apple.body.bytes, with: iphoneRing).body == "Table for two at 19:30")
        }
    }

    @Test(arguments: Backend.available)
    func mixedOrMalformedPlatformMembersAreRefused(_ backend: Backend) async throws {
        try await GatewayTestServer.with(backend) { server in
            let key = server.keys["app1"]!
            let registration = DeviceKeyRing.generate(now: UInt64(Date().timeIntervalSince1970)).registration()
            var cases: [([String: Any], String)] = []
            var apnsWithFCMToken = GatewayTestServer.deviceBody(registration)
            apnsWithFCMToken["fcmToken"] = Self.fcmToken
            cases.append((apnsWithFCMToken, "fcmToken"))
            var fcmWithAPNsToken = Self.fcmBody(registration)
            fcmWithAPNsToken["apnsToken"] = String(repeating: "ab", count: 32)
            cases.append((fcmWithAPNsToken, "apnsToken"))
            cases.append((Self.fcmBody(registration, token: "short"), "fcmToken"))
            cases.append((Self.fcmBody(registration, token: "has space in it, not a token at all"), "fcmToken"))
            var unknownPlatform = Self.fcmBody(registration)
            unknownPlatform["platform"] = "hms"
            cases.append((unknownPlatform, "platform"))
            var mismatched = Self.fcmBody(registration)
            var record = mismatched["registration"] as! [String: Any]
            record["platform"] = "apns"
            mismatched["registration"] = record
            cases.append((mismatched, "registration.platform"))
            // A member the platform requires, missing: 422 naming it (the schema cannot say which platform needs it).
            var noToken = GatewayTestServer.deviceBody(registration)
            noToken["apnsToken"] = nil
            cases.append((noToken, "apnsToken"))
            var noEnvironment = GatewayTestServer.deviceBody(registration)
            noEnvironment["environment"] = nil
            cases.append((noEnvironment, "environment"))
            var noFCMToken = Self.fcmBody(registration)
            noFCMToken["fcmToken"] = nil
            cases.append((noFCMToken, "fcmToken"))
            for (body, field) in cases {
                let answer = try await server.client.send("PUT", "/v1/apps/app1/devices/d", key: key, json: body)
                #expect(answer.status == 422, "\(field): \(answer.text)")
                #expect(answer.json["field"] as? String == field, "\(answer.text)")
            }
        }
    }
}
