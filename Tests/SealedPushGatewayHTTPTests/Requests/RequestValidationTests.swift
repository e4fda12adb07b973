import Foundation
import SealedPushCore
import Testing

/// What the gateway refuses, and how: `413` over the body limit, `400` for the wrong JSON, `422` naming the field.
@Suite("Gateway HTTP: request validation", .serialized)
struct RequestValidationTests {
    @Test func bodyOverTheLimitIs413() async throws {
        try await GatewayTestServer.with(.sqlite, maxBodyBytes: 2_048) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("d")
            // Exactly at the limit is read (and refused only for what it says).
            var atLimit = Data(#"{"devices":["d"],"content":{"body":""#.utf8)
            let tail = Data(#""}}"#.utf8)
            atLimit.append(Data(repeating: UInt8(ascii: "x"), count: 2_048 - atLimit.count - tail.count))
            atLimit.append(tail)
            #expect(atLimit.count == 2_048)
            let fits = try await server.client.send("POST", "/v1/apps/app1/notifications", key: key, body: atLimit)
            #expect(fits.status == 202)

            let over = Data(repeating: UInt8(ascii: " "), count: 2_049)
            let refused = try await server.client.send("POST", "/v1/apps/app1/notifications", key: key, body: over)
            #expect(refused.status == 413)
            #expect(refused.json["code"] as? String == "requestTooLarge")
            #expect(refused.json["limit"] as? Int == 2_048)
            #expect(refused.json["needed"] as? Int == 2_049)
            let device = try await server.client.send("PUT", "/v1/apps/app1/devices/d", key: key, body: over)
            #expect(device.status == 413)

            // Without a Content-Length (chunked), the body is refused once the bytes read pass the limit.
            let chunked = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, stream: Data(repeating: UInt8(ascii: " "), count: 8_000))
            #expect(chunked.status == 413)
            #expect(chunked.json["limit"] as? Int == 2_048)
            #expect(chunked.json["needed"] == nil)
            let chunkedFits = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key, stream: atLimit)
            #expect(chunkedFits.status == 202)
        }
    }

    @Test func malformedRegistrationsNameTheField() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let key = server.keys["app1"]!
            func put(_ body: [String: Any]) async throws -> HTTPExchange {
                try await server.client.send("PUT", "/v1/apps/app1/devices/d", key: key, json: body)
            }
            let good = SealedPushClientRing.fresh().registration()
            let other = SealedPushClientRing.fresh().registration()

            // A key id that is not the public key's.
            var mismatched = good
            mismatched.keyId = other.keyId
            let mismatch = try await put(GatewayTestServer.deviceBody(mismatched))
            #expect(mismatch.status == 422)
            #expect(mismatch.json["code"] as? String == "invalidKey")
            #expect(mismatch.json["field"] as? String == "registration.keyId")

            var badKey = good
            badKey.publicKey = "SPK1:" + String(repeating: "A", count: 42)
            let key42 = try await put(GatewayTestServer.deviceBody(badKey))
            #expect(key42.status == 422)
            #expect(key42.json["field"] as? String == "registration.publicKey")

            // createdAt two hours ahead of the gateway's clock.
            var ahead = good
            ahead.createdAt = Date().addingTimeInterval(7_200)
            let skew = try await put(GatewayTestServer.deviceBody(ahead))
            #expect(skew.status == 422)
            #expect(skew.json["code"] as? String == "invalidArgument")
            #expect(skew.json["field"] as? String == "registration.createdAt")

            var body = GatewayTestServer.deviceBody(good)
            var record = body["registration"] as! [String: Any]
            record["version"] = 2
            body["registration"] = record
            let version = try await put(body)
            #expect(version.status == 422)
            #expect(version.json["field"] as? String == "registration.version")

            let token = try await put(GatewayTestServer.deviceBody(good, token: "abc"))
            #expect(token.status == 422)
            #expect(token.json["field"] as? String == "apnsToken")
            var tokenless = GatewayTestServer.deviceBody(good)
            tokenless["apnsToken"] = nil
            let noToken = try await put(tokenless)
            #expect(noToken.json["message"] as? String == "apnsToken is required for an APNs device")

            var environment = GatewayTestServer.deviceBody(good)
            environment["environment"] = "staging"
            #expect(try await put(environment).json["field"] as? String == "environment")

            var unknown = GatewayTestServer.deviceBody(good)
            unknown["extra"] = true
            let extra = try await put(unknown)
            #expect(extra.status == 400)
            #expect(extra.json["code"] as? String == "malformedRequest")
            // Nothing near "extra": no guess, but every member known there.
            #expect(extra.json["message"] as? String
                == "unknown member \"extra\" (known here: apnsToken, environment, fcmToken, platform, registration, userId)")
            // A misspelling is matched to the member meant, with its path.
            var misspelled = GatewayTestServer.deviceBody(good)
            var inner = misspelled["registration"] as! [String: Any]
            inner["publickey"] = inner.removeValue(forKey: "publicKey")
            misspelled["registration"] = inner
            let nested = try await put(misspelled)
            #expect(nested.status == 400)
            #expect(nested.json["field"] as? String == "registration.publickey")
            #expect((nested.json["message"] as? String)?.hasPrefix(
                "unknown member \"registration.publickey\"; did you mean \"registration.publicKey\"? (known here: ") == true,
                "\(nested.text)")

            let notJSON = try await server.client.send(
                "PUT", "/v1/apps/app1/devices/d", key: key, body: Data("{nope".utf8))
            #expect(notJSON.status == 400)

            // None of these created the device; the good registration does.
            #expect(try await server.client.send("GET", "/v1/apps/app1/devices/d", key: key).status == 404)
            #expect(try await put(GatewayTestServer.deviceBody(good)).status == 201)
        }
    }

    @Test func sendsThatCannotBeCarriedOutNameTheField() async throws {
        try await GatewayTestServer.with(.sqlite, maxBodyBytes: 262_144) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("d")
            func send(_ body: [String: Any]) async throws -> HTTPExchange {
                try await server.client.send("POST", "/v1/apps/app1/notifications", key: key, json: body)
            }

            let badge = try await send(["devices": ["d"], "content": ["badge": -1]])
            #expect(badge.status == 422)
            #expect(badge.json["code"] as? String == "malformedContent")
            #expect(badge.json["field"] as? String == "content.badge")

            let level = try await send(["devices": ["d"], "content": ["interruption-level": "loud"]])
            #expect(level.json["field"] as? String == "content.interruption-level")

            let many = try await send(["devices": (0...1_000).map { "d\($0)" }, "content": ["body": "x"]])
            #expect(many.status == 422)
            #expect(many.json["field"] as? String == "devices")

            let unknown = try await send(["devices": ["d", "nobody"], "content": ["body": "x"]])
            #expect(unknown.status == 422)
            #expect(unknown.json["code"] as? String == "unknownDevice")
            #expect(unknown.json["field"] as? String == "devices[1]")

            let typo = try await send(["devices": ["d"], "contnet": ["body": "x"]])
            #expect(typo.status == 400)
            #expect(typo.json["message"] as? String
                == "unknown member \"contnet\"; did you mean \"content\"? (known here: attachments, collapseId, content, devices, placeholder, priority, ttl, users)",
                "\(typo.text)")

            let repeated = try await send(["devices": ["d", "d"], "content": ["body": "x"]])
            #expect(repeated.json["field"] as? String == "devices[1]")

            #expect(try await send(["devices": ["d"], "content": ["body": "x"], "ttl": 0]).json["field"] as? String == "ttl")
            #expect(try await send(["devices": ["d"], "content": ["body": "x"], "priority": 7]).json["field"] as? String == "priority")

            // Over the canonical content limit (2,910 bytes with the notification-id the gateway adds): contentTooLarge
            // with the sender's own numbers.
            let big = String(repeating: "y", count: 3_000)
            let tooLarge = try await send(["devices": ["d"], "content": ["body": big]])
            #expect(tooLarge.status == 422)
            #expect(tooLarge.json["code"] as? String == "contentTooLarge")
            #expect(tooLarge.json["field"] as? String == "content")
            // The sender's content, and what is left for it of the 2,910 bytes once the gateway's
            // `,"notification-id":"<uuid>"` is in.
            let stamped = #","notification-id":""#.utf8.count + 36 + 1
            #expect(tooLarge.json["needed"] as? Int == #"{"body":""#.utf8.count + 3_000 + 2)
            #expect(tooLarge.json["limit"] as? Int == Padding.maxContentLength - stamped)

            // Under the content limit, but with a long placeholder the APNs body would be over 4,096 bytes.
            let almost = String(repeating: "z", count: 2_800)
            let payload = try await send([
                "devices": ["d"], "content": ["body": almost], "placeholder": ["body": String(repeating: "p", count: 1_000)],
            ])
            #expect(payload.status == 422)
            #expect(payload.json["code"] as? String == "payloadTooLarge")
            let needed = try #require(payload.json["needed"] as? Int)
            #expect(payload.json["limit"] as? Int == 4_096)
            #expect(needed > 4_096)

            // None of these queued anything.
            #expect(try await server.store.queueDepth().total == 0)
            // No message echoed the content.
            for answer in [tooLarge, payload] { #expect(!answer.text.contains("yyyyyyyy") && !answer.text.contains("zzzzzzzz")) }
        }
    }

    @Test func overBudgetContentGoesByReferenceWhenConfigured() async throws {
        try await GatewayTestServer.with(.sqlite, maxBodyBytes: 262_144, overflowPrefix: "https://blobs.example.com/")
        { server in
            let key = server.keys["app1"]!
            let ring = try await server.registerDevice("d")
            let long = String(repeating: "long story ", count: 600)  // 6,600 bytes: over the inline budget
            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key,
                json: ["devices": ["d"], "content": ["title": "Story", "body": long]])
            #expect(sent.status == 202)
            let job = try #require(try await server.store.claim(owner: "t", limit: 1, leaseDuration: .seconds(60), now: Date()).first)
            let preview = try server.open(job.body.bytes, with: ring)
            #expect(preview.title == "Story")
            #expect(preview.body.map { $0.hasSuffix("…") && long.hasPrefix(String($0.dropLast())) } == true)
            let reference = try #require(preview.contentReference?["url"]?.stringValue)
            #expect(reference.hasPrefix("https://blobs.example.com/"))
            // The blob is stored once, encrypted: the text is not in it.
            let blobs = try FileManager.default.contentsOfDirectory(atPath: server.directory.appendingPathComponent("blobs").path)
            #expect(!blobs.isEmpty)
        }
    }
}
