import Foundation
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushServer
import Testing

/// Every APNs answer the client can provoke maps to the right typed result, over real TLS + HTTP/2 on loopback.
@Suite("APNs status mapping")
struct APNsStatusMappingTests {
    static let unregisteredSince = Date(timeIntervalSince1970: 1_700_000_000.123)

    @Test func deliveredCarriesTheApnsIDAndIsRecordedOnce() async throws {
        try await withFixture { fixture in
            let client = try fixture.makeClient()
            let notification = fixture.notification(1)
            let report = await client.send(notification)
            #expect(report.result == .delivered(apnsID: notification.apnsID))
            #expect(report.attempts == 1)
            let records = fixture.emulator.recorder.notifications(for: notification.deviceToken.hex)
            #expect(records.count == 1)
            #expect(records.first?.body == APNsTestFixture.payload)
            #expect(records.first?.apnsID == notification.apnsID.uuidString.lowercased())
            #expect(records.first?.topic == APNsTestFixture.topic)
            #expect(records.first?.pushType == "alert")
            #expect(records.first?.priority == 10)
            await client.shutdown()
        }
    }

    @Test func headersReachAPNs() async throws {
        try await withFixture { fixture in
            let client = try fixture.makeClient()
            var notification = fixture.notification(2)
            notification.priority = .powerConsiderate
            notification.expiration = Date(timeIntervalSince1970: 1_900_000_000)
            notification.collapseID = String(repeating: "c", count: 64)
            let report = await client.send(notification)
            #expect(report.result.isDelivered)
            let record = fixture.emulator.recorder.notifications(for: notification.deviceToken.hex).first
            #expect(record?.priority == 5)
            #expect(record?.expiration == 1_900_000_000)
            #expect(record?.collapseID == String(repeating: "c", count: 64))
            await client.shutdown()
        }
    }

    @Test func rejectionsAreFinalAndTyped() async throws {
        let unknown = APNsTestFixture.deviceToken(99)
        let gone = APNsTestFixture.deviceToken(410)
        try await withFixture({ configuration in
            configuration.allowedTopics = [APNsTestFixture.topic]
            configuration.knownDeviceTokens = [APNsTestFixture.deviceToken(1).hex, gone.hex]
            configuration.unregisteredDeviceTokens = [gone.hex: Self.unregisteredSince]
        }) { fixture in
            let client = try fixture.makeClient()

            // 400 BadDeviceToken: well-formed but unknown to APNs. Not retried.
            let badToken = APNsNotification(
                deviceToken: unknown, topic: APNsTestFixture.topic, payload: APNsTestFixture.payload)
            let r1 = await client.send(badToken)
            #expect(r1.result.failure?.status == 400)
            #expect(r1.result.failure?.reason == .badDeviceToken)
            #expect(fixture.emulator.recorder.requestCount(apnsID: badToken.apnsID.uuidString) == 1)

            // 400 TopicDisallowed.
            var badTopic = fixture.notification(1)
            badTopic.topic = "com.example.other"
            let r2 = await client.send(badTopic)
            #expect(r2.result.failure?.status == 400)
            #expect(r2.result.failure?.reason == .topicDisallowed)

            // 410 Unregistered with its timestamp, also on the pruning stream.
            let goneNotification = APNsNotification(
                deviceToken: gone, topic: APNsTestFixture.topic, payload: APNsTestFixture.payload)
            let r3 = await client.send(goneNotification)
            #expect(r3.result.failure?.status == 410)
            #expect(r3.result.failure?.reason == .unregistered)
            let timestamp = try #require(r3.result.failure?.timestamp)
            #expect(abs(timestamp.timeIntervalSince1970 - 1_700_000_000.123) < 0.0011)
            #expect(r3.attempts == 1)
            await client.shutdown()  // finishes the stream so the loop below ends
            var pruned: [APNsUnregisteredToken] = []
            for await entry in client.unregisteredTokens { pruned.append(entry) }
            #expect(pruned.count == 1)
            #expect(pruned.first?.deviceToken == gone)
            #expect(pruned.first?.apnsID == goneNotification.apnsID)
            #expect(pruned.first?.timestamp.map { abs($0.timeIntervalSince1970 - 1_700_000_000.123) < 0.0011 } == true)
            #expect(fixture.emulator.recorder.totalAccepted == 0)
        }
    }

    @Test func preSendChecksRejectWithoutSending() async throws {
        try await withFixture { fixture in
            let client = try fixture.makeClient()
            // 4097 bytes: one over the limit.
            let big = Array(#"{"a":""#.utf8) + [UInt8](repeating: 0x61, count: 4097 - 8) + Array(#""}"#.utf8)
            #expect(big.count == 4097)
            let tooLarge = fixture.notification(1, payload: big)
            let r1 = await client.send(tooLarge)
            #expect(r1.result.failure?.reason == .payloadTooLarge)
            #expect(r1.result.failure?.status == nil)
            #expect(r1.attempts == 0)

            // Exactly 4096 bytes goes through.
            let limit = Array(#"{"a":""#.utf8) + [UInt8](repeating: 0x61, count: 4096 - 8) + Array(#""}"#.utf8)
            #expect(limit.count == 4096)
            #expect(await client.send(fixture.notification(2, payload: limit)).result.isDelivered)

            var noTopic = fixture.notification(3)
            noTopic.topic = ""
            #expect(await client.send(noTopic).result.failure?.reason == .missingTopic)

            var longCollapse = fixture.notification(4)
            longCollapse.collapseID = String(repeating: "x", count: 65)
            #expect(await client.send(longCollapse).result.failure?.reason == .badCollapseID)

            #expect(await client.send(fixture.notification(5, payload: [])).result.failure?.reason == .payloadEmpty)

            #expect(fixture.emulator.recorder.totalRequests == 1)
            await client.shutdown()
        }
    }

    @Test func deviceTokenFormat() throws {
        #expect(throws: SealedPushError.self) { try DeviceToken(hex: String(repeating: "a", count: 62)) }
        #expect(throws: SealedPushError.self) { try DeviceToken(hex: String(repeating: "a", count: 65)) }
        #expect(throws: SealedPushError.self) { try DeviceToken(hex: String(repeating: "a", count: 202)) }
        #expect(throws: SealedPushError.self) { try DeviceToken(hex: String(repeating: "g", count: 64)) }
        #expect(throws: SealedPushError.self) { try DeviceToken(hex: "<" + String(repeating: "a", count: 62) + ">") }
        #expect(try DeviceToken(hex: String(repeating: "AB", count: 32)).hex == String(repeating: "ab", count: 32))
        #expect(try DeviceToken(hex: String(repeating: "0", count: 200)).hex.count == 200)
        #expect(try DeviceToken(bytes: [UInt8](repeating: 0xFE, count: 32)).hex == String(repeating: "fe", count: 32))
    }

    @Test func wrongKeyIsInvalidProviderTokenAndNotRetried() async throws {
        try await withFixture { fixture in
            let otherKey = try SealedPushServerKeys.freshPEM()
            let client = try fixture.makeClient(keyPEM: otherKey)
            let notification = fixture.notification(1)
            let report = await client.send(notification)
            #expect(report.result.failure?.status == 403)
            #expect(report.result.failure?.reason == .invalidProviderToken)
            #expect(fixture.emulator.recorder.requestCount(apnsID: notification.apnsID.uuidString) == 1)
            await client.shutdown()

            let wrongKid = try fixture.makeClient(keyID: "ZZZZZZZZZZ")
            #expect(await wrongKid.send(fixture.notification(2)).result.failure?.reason == .invalidProviderToken)
            await wrongKid.shutdown()
        }
    }

    @Test func staleTokenIsExpiredProviderToken() async throws {
        try await withFixture { fixture in
            var configuration = fixture.clientConfiguration()
            // The client's clock runs 61 minutes behind: its token is already older than 60 minutes for APNs.
            configuration.clock = { Date().addingTimeInterval(-61 * 60) }
            let client = try fixture.makeClient(configuration)
            let notification = fixture.notification(1)
            let report = await client.send(notification)
            #expect(report.result.failure?.status == 403)
            #expect(report.result.failure?.reason == .expiredProviderToken)
            #expect(fixture.emulator.recorder.requestCount(apnsID: notification.apnsID.uuidString) == 1)
            await client.shutdown()
        }
    }

    @Test func tokenMintedTooSoonIsTooManyProviderTokenUpdates() async throws {
        // Scope `.key`: every connection must use the key's current token (a second provider instance with its
        // own fresh token is then "too soon").
        try await withFixture({ $0.tokenUpdateScope = .key }) { fixture in
            let first = try fixture.makeClient()
            #expect(await first.send(fixture.notification(1)).result.isDelivered)
            // A second token for the same key, issued 5 minutes later: too soon after the first.
            var configuration = fixture.clientConfiguration()
            configuration.clock = { Date().addingTimeInterval(-5 * 60) }
            let second = try fixture.makeClient(configuration)
            let report = await second.send(fixture.notification(2))
            #expect(report.result.failure?.status == 429)
            #expect(report.result.failure?.reason == .tooManyProviderTokenUpdates)
            await first.shutdown()
            await second.shutdown()
        }
    }

    @Test(arguments: [
        (EmulatorFault.tooManyRequests, 429, APNsReason.tooManyRequests),
        (EmulatorFault.internalServerError, 500, APNsReason.internalServerError),
        (EmulatorFault.serviceUnavailable, 503, APNsReason.serviceUnavailable),
    ])
    func retryableStatusesAreRetriedThenReported(fault: EmulatorFault, status: Int, reason: APNsReason) async throws {
        // 4 failures in a row exhaust maxAttempts = 4; the next notification gets one failure then succeeds.
        try await withFixture({ $0.faults = EmulatorFaultPlan(script: [fault, fault, fault, fault, fault]) }) {
            fixture in
            let client = try fixture.makeClient()
            let exhausted = fixture.notification(1)
            let r1 = await client.send(exhausted)
            #expect(r1.result.failure?.status == status)
            #expect(r1.result.failure?.reason == reason)
            #expect(r1.attempts == 4)
            #expect(fixture.emulator.recorder.requestCount(apnsID: exhausted.apnsID.uuidString) == 4)

            let recovered = fixture.notification(2)
            let r2 = await client.send(recovered)
            #expect(r2.result == .delivered(apnsID: recovered.apnsID))
            #expect(r2.attempts == 2)
            #expect(fixture.emulator.recorder.acceptedCount(apnsID: recovered.apnsID.uuidString) == 1)
            await client.shutdown()
        }
    }
}

/// Keys made by the OpenSSL generator, for tests that need a second key.
enum SealedPushServerKeys {
    static func freshPEM() throws -> [UInt8] {
        try SealedPushServer.APNsKeyGenerator.generatePEM()
    }
}
