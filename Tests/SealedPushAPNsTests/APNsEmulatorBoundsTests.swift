import Foundation
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushCore
import Testing

/// The emulator's recorder under sustained load: counters count everything, memory holds a bounded window.
@Suite("Emulator memory bounds")
struct APNsEmulatorBoundsTests {
    /// Like APNs for an offline device, the emulator keeps by default only the last notification per device token,
    /// while its counters count every request and acceptance.
    @Test func keepsTheLastNotificationPerTokenByDefaultAndCountsAll() async throws {
        try await withFixture { fixture in
            let client = try fixture.makeClient()
            let tokens = 5
            let rounds = 8
            var last: [String: UUID] = [:]
            for round in 0..<rounds {
                // One notification per token in each round; rounds one after the other, so the last round's
                // notification is the newest for every token.
                let notifications = (0..<tokens).map { fixture.notification($0) }
                let summary = await client.send(notifications, maxConcurrent: tokens)
                #expect(summary.delivered == tokens, "round \(round)")
                for notification in notifications { last[notification.deviceToken.hex] = notification.apnsID }
            }
            let recorder = fixture.emulator.recorder
            #expect(recorder.totalRequests == tokens * rounds)
            #expect(recorder.totalAccepted == tokens * rounds)
            #expect(recorder.allNotifications.count == tokens)
            for (token, apnsID) in last {
                #expect(recorder.notifications(for: token).map(\.apnsID) == [apnsID.uuidString.lowercased()])
            }
            await client.shutdown()
        }
    }

    /// Far more notifications than the bounds: the recorder holds at most the configured number (per token and in
    /// all) and tracks at most the configured `apns-id`s, while its counters count every request and acceptance.
    @Test func holdsAtMostTheConfiguredWindowWhileCountersCountAll() async throws {
        try await withFixture({ configuration in
            configuration.recordedNotificationsPerToken = 3
            configuration.recordedNotificationsLimit = 50
            configuration.trackedAPNsIDs = 200
        }) { fixture in
            let client = try fixture.makeClient()
            let count = 1_000
            let tokens = 100
            let notifications = (0..<count).map { fixture.notification($0 % tokens) }
            let summary = await client.send(notifications, maxConcurrent: 100)
            #expect(summary.delivered == count)
            // One more, alone: the newest acceptance of all.
            let newest = fixture.notification(7)
            #expect(await client.send(newest).result.isDelivered)

            let recorder = fixture.emulator.recorder
            #expect(recorder.totalRequests == count + 1)
            #expect(recorder.totalAccepted == count + 1)
            #expect(recorder.duplicateAcceptances == 0)
            let held = recorder.allNotifications
            #expect(!held.isEmpty)
            #expect(held.count <= 50)
            #expect(recorder.heldNotificationCount == held.count)
            for token in 0..<tokens {
                #expect(recorder.notifications(for: APNsTestFixture.deviceToken(token).hex).count <= 3)
            }
            #expect(held.last?.apnsID == newest.apnsID.uuidString.lowercased())
            #expect(recorder.notifications(for: newest.deviceToken.hex).last?.apnsID == held.last?.apnsID)
            // Per-apns-id counts: the newest ids are tracked, the oldest forgotten.
            #expect(recorder.acceptedCounts.count <= 200)
            #expect(recorder.acceptedCount(apnsID: newest.apnsID.uuidString) == 1)
            #expect(recorder.requestCount(apnsID: notifications[0].apnsID.uuidString) == 0)
            await client.shutdown()
        }
    }

    /// `--record FILE`: the full history on disk, one JSON line per accepted notification, while memory holds
    /// only the configured window.
    @Test func writesTheFullHistoryAsJSONLinesWhenAsked() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("history.jsonl")
        try await withFixture({ configuration in
            configuration.recordFile = file.path
            configuration.recordedNotificationsLimit = 10
        }) { fixture in
            let client = try fixture.makeClient()
            let count = 500
            let notifications = (0..<count).map { fixture.notification($0 % 50) }
            let summary = await client.send(notifications, maxConcurrent: 50)
            #expect(summary.delivered == count)
            await client.shutdown()
            #expect(fixture.emulator.recorder.allNotifications.count <= 10)
            await fixture.emulator.stop()  // writes the buffer out

            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == count)
            let expectedPayload = try JSONSerialization.jsonObject(with: Data(APNsTestFixture.payload)) as? NSDictionary
            var tokensByID: [String: String] = [:]
            for line in lines {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["push-type"] as? String == "alert")
                #expect(object?["topic"] as? String == APNsTestFixture.topic)
                #expect((object?["payload"] as? NSDictionary) == expectedPayload)
                if let id = object?["apns-id"] as? String, let token = object?["token"] as? String {
                    tokensByID[id] = token
                }
            }
            let expected = Dictionary(
                uniqueKeysWithValues: notifications.map { ($0.apnsID.uuidString.lowercased(), $0.deviceToken.hex) })
            #expect(tokensByID == expected)
        }
    }

    @Test func refusesARecordFileThatIsASymbolicLink() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("elsewhere")
        try Data("keep".utf8).write(to: target)
        let link = directory.appendingPathComponent("history.jsonl")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        await #expect(throws: SealedPushError.self) {
            _ = try await APNsTestFixture.start { $0.recordFile = link.path }
        }
        #expect(try Data(contentsOf: target) == Data("keep".utf8))
    }
}
