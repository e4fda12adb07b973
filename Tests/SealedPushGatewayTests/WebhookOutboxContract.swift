import Foundation
import SealedPushCore
import SealedPushGateway
import Testing

/// The webhook's outbox, the same on every store: an event is written by the transaction that makes it true, and a
/// node holds it under a lease until it ends (deleted), goes back (released) or its holder dies (lease expired, or its
/// node's next incarnation started).
enum WebhookOutboxContract {
    static let now = StoreFixtures.now
    static let lease = Duration.seconds(60)

    /// Enqueues one notification to `devices` of alpha and claims its jobs.
    static func claimedJobs(
        _ devices: [String], _ store: any GatewayStore, _ fixtures: StoreFixtures, owner: String = "delivery/1"
    ) async throws -> [String: ClaimedJob] {
        let keys = try await StoreFixtures.register(devices, in: "alpha", store)
        _ = try await store.enqueue(try fixtures.notification(appID: "alpha", to: keys))
        let jobs = try await store.claim(owner: owner, limit: devices.count, leaseDuration: lease, now: now)
        #expect(jobs.count == devices.count)
        return Dictionary(uniqueKeysWithValues: jobs.map { ($0.deviceID, $0) })
    }

    /// Enqueues one notification to `devices` of alpha, claims its jobs and ends each `unregistered` with its device's
    /// event for the outbox.
    /// - Returns: The events written, by device.
    @discardableResult
    static func unregistered(_ devices: [String], _ store: any GatewayStore, _ fixtures: StoreFixtures) async throws
        -> [String: UnregisteredDeviceEvent]
    {
        let jobs = try await claimedJobs(devices, store, fixtures)
        var events: [String: UnregisteredDeviceEvent] = [:]
        for device in devices {
            events[device] = UnregisteredDeviceEvent(
                appID: "alpha", deviceID: device, reason: "Unregistered", unregisteredAt: now)
        }
        let held = try await store.finish(
            devices.map { device in
                JobFinish(
                    jobID: jobs[device]!.id, owner: "delivery/1", outcome: .unregistered(reason: "Unregistered"),
                    requests: 1, transientReason: nil, now: now, webhookEvent: events[device])
            })
        #expect(held.allSatisfy { $0 })
        return events
    }

    /// An unregistered device's event is written with the job's end that marks the device, and only then: not for an
    /// end without an event, nor for a send; a job's first receipt writes its event when asked to, a later receipt
    /// none. Bodies are the events' own JSON.
    static func eventsAreWrittenWithWhatTheyReport(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let jobs = try await claimedJobs(["a", "b", "c", "d"], store, fixtures)
            let eventA = UnregisteredDeviceEvent(
                appID: "alpha", deviceID: "a", reason: "Unregistered", unregisteredAt: now.addingTimeInterval(-60))
            let sentWithEvent = UnregisteredDeviceEvent(
                appID: "alpha", deviceID: "c", reason: "Unregistered", unregisteredAt: now)
            // d registers another token before its job ends: the end does not mark it, so no event.
            let (_, registration) = try StoreFixtures.registration()
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "d", apnsToken: StoreFixtures.token(999), environment: .sandbox,
                registration: registration, now: now)
            let eventD = UnregisteredDeviceEvent(appID: "alpha", deviceID: "d", reason: "Unregistered", unregisteredAt: now)
            func end(_ device: String, _ outcome: JobOutcome, _ event: UnregisteredDeviceEvent?) -> JobFinish {
                JobFinish(
                    jobID: jobs[device]!.id, owner: "delivery/1", outcome: outcome, requests: 1, transientReason: nil,
                    now: now, webhookEvent: event)
            }
            let held = try await store.finish([
                end("a", .unregistered(reason: "Unregistered"), eventA),
                end("b", .unregistered(reason: "BadDeviceToken"), nil),
                end("c", .sent(apnsID: UUID().lowercasedString), sentWithEvent),
                end("d", .unregistered(reason: "Unregistered"), eventD),
            ])
            #expect(held == [true, true, true, true])
            let unregistered = try await store.claimWebhookEvents(owner: "hook/1", limit: 10, leaseDuration: lease, now: now)
            #expect(unregistered.count == 1)
            let written = try #require(unregistered.first)
            #expect(written.eventType == "device.unregistered" && written.appID == "alpha" && written.deviceID == "a")
            #expect(written.jsonBody == eventA.jsonBody && written.attempts == 0)
            // The body as the contract writes it (StoreFixtures.now is 2027-01-15T08:00:00Z; a minute before).
            let object = try JSONSerialization.jsonObject(with: Data(written.jsonBody)) as? [String: String]
            #expect(
                object == [
                    "type": "device.unregistered", "appId": "alpha", "deviceId": "a", "reason": "Unregistered",
                    "unregisteredAt": "2027-01-15T07:59:00Z",
                ])
            #expect(written.deliveryID.count == 36 && written.deliveryID == written.deliveryID.lowercased())

            // Receipts about c's job (sent): the first writes its event, the second (another receipt id) none.
            let jobC = try #require(jobs["c"])
            let header = try EnvelopeHeader(
                parsing: try APNsPayload.extractEnvelope(fromBody: jobC.body.bytes)[0..<EnvelopeV1.headerLength])
            func receipt(_ id: Character) -> ReceivedReceipt {
                ReceivedReceipt(
                    appID: "alpha", keyID: header.recipientKeyID.hex, receiptID: String(repeating: id, count: 32),
                    receiptExpiresAt: now.addingTimeInterval(604_800), messageID: Hex.encode(header.messageID),
                    outcome: "fallback", reason: "timedOut", attachmentsDelivered: 0, attachmentsFailed: 1,
                    deviceTime: now.addingTimeInterval(2), receivedAt: now.addingTimeInterval(3),
                    forwardsToWebhook: true)
            }
            #expect(
                try await store.recordReceipt(receipt("1"))
                    == .recorded(notificationID: jobC.notificationID, deviceID: "c", first: true))
            #expect(
                try await store.recordReceipt(receipt("2"))
                    == .recorded(notificationID: jobC.notificationID, deviceID: "c", first: false))
            let receipts = try await store.claimWebhookEvents(owner: "hook/1", limit: 10, leaseDuration: lease, now: now)
            #expect(receipts.count == 1)
            let expected = ReceiptEvent(
                appID: "alpha", notificationID: jobC.notificationID, deviceID: "c", outcome: "fallback",
                reason: "timedOut", attachmentsDelivered: 0, attachmentsFailed: 1,
                deviceTime: now.addingTimeInterval(2), receivedAt: now.addingTimeInterval(3))
            #expect(receipts.first?.jsonBody == expected.jsonBody && receipts.first?.eventType == "notification.receipt")
            #expect(Set((unregistered + receipts).map(\.deliveryID)).count == 2)

            // Purging the notification purges its receipt's event with its job; the device's event stays.
            let later = now.addingTimeInterval(86_400)
            #expect(try await store.purgeExpired(before: later, limit: 100) == 1)
            let left = try await store.claimWebhookEvents(owner: "hook/2", limit: 10, leaseDuration: lease, now: later)
            #expect(left.map(\.id) == unregistered.map(\.id))
        }
    }

    /// One holder at a time: a claimed event is not claimed again while its lease runs (renewals extend it); an
    /// expired, released or previous incarnation's event is claimable at once, keeping its delivery id and the
    /// attempts released with it; an ended event is gone, and only its holder can end or release it.
    static func leasesHoldOneNodeAtATime(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            try await unregistered(["a", "b", "c"], store, fixtures)
            let first = try await store.claimWebhookEvents(owner: "node-1/x", limit: 2, leaseDuration: lease, now: now)
            #expect(first.map(\.deviceID) == ["a", "b"])  // oldest first
            let second = try await store.claimWebhookEvents(owner: "node-2/x", limit: 10, leaseDuration: lease, now: now)
            #expect(second.map(\.deviceID) == ["c"])
            #expect(try await store.claimWebhookEvents(
                owner: "node-3/x", limit: 10, leaseDuration: lease, now: now.addingTimeInterval(59)).isEmpty)
            // node-1 renews at 50 s: its two stay held past 60 s, node-2's one lapses.
            #expect(try await store.renewWebhookEvents(owner: "node-1/x", leaseDuration: lease, now: now.addingTimeInterval(50)) == 2)
            let lapsed = try await store.claimWebhookEvents(
                owner: "node-3/x", limit: 10, leaseDuration: lease, now: now.addingTimeInterval(61))
            #expect(lapsed.map(\.id) == second.map(\.id))
            #expect(lapsed.first?.deliveryID == second.first?.deliveryID)
            // Only the holder records its attempts, ends or releases.
            #expect(try await !store.recordWebhookAttempts(id: first[0].id, owner: "node-2/x", attempts: 7))
            #expect(try await !store.endWebhookEvent(id: first[0].id, owner: "node-2/x"))
            #expect(try await !store.releaseWebhookEvent(id: first[1].id, owner: "node-3/x", attempts: 9))
            #expect(try await store.endWebhookEvent(id: first[0].id, owner: "node-1/x"))
            #expect(try await store.releaseWebhookEvent(id: first[1].id, owner: "node-1/x", attempts: 3))
            let released = try await store.claimWebhookEvents(
                owner: "node-3/x", limit: 10, leaseDuration: lease, now: now.addingTimeInterval(62))
            #expect(released.map(\.id) == [first[1].id])
            #expect(released.first?.attempts == 3 && released.first?.deliveryID == first[1].deliveryID)
            // node-3 dies holding two; its next incarnation takes them back at its start, not after the lease.
            let restarted = NodeInstance.current(nodeID: "node-3", now: now.addingTimeInterval(63))
            #expect(restarted.leaseOwner != "node-3/x")
            _ = try await store.takeOverNode(restarted, replacing: nil, now: now.addingTimeInterval(63))
            let takenBack = try await store.claimWebhookEvents(
                owner: restarted.leaseOwner, limit: 10, leaseDuration: lease, now: now.addingTimeInterval(64))
            #expect(Set(takenBack.map(\.id)) == Set(lapsed.map(\.id) + released.map(\.id)))
            // The ended one is gone for good.
            let later = try await store.claimWebhookEvents(
                owner: "node-4/x", limit: 10, leaseDuration: lease, now: now.addingTimeInterval(3_600))
            #expect(!later.map(\.id).contains(first[0].id) && later.count == 2)
            // node-4 records a failed attempt on one (it goes on holding both), then dies: whoever takes them next
            // goes on from the attempts recorded, not from those of the last release.
            let failing = try #require(later.first { $0.id == first[1].id })
            #expect(try await store.recordWebhookAttempts(id: failing.id, owner: "node-4/x", attempts: 4))
            #expect(try await store.claimWebhookEvents(
                owner: "node-5/x", limit: 10, leaseDuration: lease, now: now.addingTimeInterval(3_659)).isEmpty)
            let orphaned = try await store.claimWebhookEvents(
                owner: "node-5/x", limit: 10, leaseDuration: lease, now: now.addingTimeInterval(3_661))
            #expect(orphaned.count == 2 && orphaned.first { $0.id == failing.id }?.attempts == 4)
        }
    }
    /// A node claims only the event types it can post: a row a newer gateway wrote (a type this one does not know)
    /// stays unleased for a node that knows it — not held, renewed and never posted by every older node of a rolling
    /// upgrade in turn — and does not take a claim's place from the events behind it.
    static func unknownTypesAreLeftForNodesThatKnowThem(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            try await harness.execute(
                """
                INSERT INTO webhook_outbox (delivery_id, event_type, app_id, device_id, created_at)
                VALUES ('d6f7c1f0-0000-4000-8000-000000000001', 'device.renamed', 'alpha', 'z', 0)
                """)
            try await unregistered(["a"], store, fixtures)
            #expect(try await store.webhookOutboxDepth() == WebhookOutboxDepth(waiting: 2, givenUp: 0))
            let claimed = try await store.claimWebhookEvents(owner: "node-1/x", limit: 1, leaseDuration: lease, now: now)
            #expect(claimed.map(\.deviceID) == ["a"])
            // The holder renews only what it claimed; the newer type's row is still there, held by nobody.
            #expect(try await store.renewWebhookEvents(owner: "node-1/x", leaseDuration: lease, now: now) == 1)
            #expect(try await store.endWebhookEvent(id: try #require(claimed.first).id, owner: "node-1/x"))
            #expect(try await store.webhookOutboxDepth() == WebhookOutboxDepth(waiting: 1, givenUp: 0))
            #expect(try await store.claimWebhookEvents(owner: "node-2/x", limit: 10, leaseDuration: lease, now: now).isEmpty)
            #expect(try await store.renewWebhookEvents(owner: "node-2/x", leaseDuration: lease, now: now) == 0)
        }
    }
    /// A given-up event stays in the outbox — unclaimed, listed with its failure and attempts — until the operator
    /// sends it again (claimable at once, no attempts counted, the same delivery id) or the retention purge deletes
    /// it; only its holder gives it up.
    static func givenUpEventsAreKeptUntilSentAgainOrPurged(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            try await unregistered(["a", "b"], store, fixtures)
            let held = try await store.claimWebhookEvents(owner: "node-1/x", limit: 10, leaseDuration: lease, now: now)
            let (a, b) = (try #require(held.first { $0.deviceID == "a" }), try #require(held.first { $0.deviceID == "b" }))
            let givenUpAt = now.addingTimeInterval(600)
            #expect(try await !store.giveUpWebhookEvent(
                id: a.id, owner: "node-2/x", attempts: 8, failure: "HTTP 503", now: givenUpAt))
            #expect(try await store.giveUpWebhookEvent(
                id: a.id, owner: "node-1/x", attempts: 8, failure: "HTTP 503", now: givenUpAt))
            #expect(try await store.webhookOutboxDepth() == WebhookOutboxDepth(waiting: 1, givenUp: 1))
            // Not claimable, even long after; b's lease lapsed and b is.
            let later = try await store.claimWebhookEvents(
                owner: "node-3/x", limit: 10, leaseDuration: lease, now: now.addingTimeInterval(3_600))
            #expect(later.map(\.id) == [b.id])
            #expect(try await store.endWebhookEvent(id: b.id, owner: "node-3/x"))
            // Listed, by app.
            let listed = try await store.givenUpWebhookEvents(appID: nil, limit: 10)
            #expect(listed.count == 1)
            let entry = try #require(listed.first)
            #expect(entry.id == a.id && entry.deliveryID == a.deliveryID && entry.eventType == "device.unregistered")
            #expect(entry.appID == "alpha" && entry.deviceID == "a" && entry.attempts == 8 && entry.failure == "HTTP 503")
            #expect(abs(entry.givenUpAt.timeIntervalSince(givenUpAt)) < 0.002)
            #expect(try await store.givenUpWebhookEvents(appID: "alpha", limit: 10).map(\.id) == [a.id])
            #expect(try await store.givenUpWebhookEvents(appID: "beta", limit: 10).isEmpty)
            // Sent again: only what is given up, of the app named.
            #expect(try await store.redeliverWebhookEvents(appID: "beta", ids: nil) == 0)
            #expect(try await store.redeliverWebhookEvents(appID: nil, ids: [b.id]) == 0)
            #expect(try await store.redeliverWebhookEvents(appID: "alpha", ids: [a.id]) == 1)
            #expect(try await store.webhookOutboxDepth() == WebhookOutboxDepth(waiting: 1, givenUp: 0))
            let again = try await store.claimWebhookEvents(
                owner: "node-3/x", limit: 10, leaseDuration: lease, now: now.addingTimeInterval(3_601))
            #expect(again.map(\.id) == [a.id] && again.first?.attempts == 0 && again.first?.deliveryID == a.deliveryID)
            // Given up again; the retention purge takes it once it was given up before the cutoff, not sooner.
            let secondTime = now.addingTimeInterval(7_200)
            #expect(try await store.giveUpWebhookEvent(
                id: a.id, owner: "node-3/x", attempts: 1, failure: "HTTP 410", now: secondTime))
            _ = try await store.purgeExpired(before: secondTime.addingTimeInterval(-1), limit: 100)
            #expect(try await store.givenUpWebhookEvents(appID: nil, limit: 10).map(\.failure) == ["HTTP 410"])
            _ = try await store.purgeExpired(before: secondTime.addingTimeInterval(1), limit: 100)
            #expect(try await store.webhookOutboxDepth() == WebhookOutboxDepth(waiting: 0, givenUp: 0))
        }
    }

    /// A given-up event keeps the first 500 characters of its failure (whole characters, not bytes), whatever the
    /// description it was given up with; a shorter one whole.
    static func aGivenUpEventKeepsTheStartOfALongFailure(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            try await unregistered(["a", "b"], store, fixtures)
            let held = try await store.claimWebhookEvents(owner: "node-1/x", limit: 10, leaseDuration: lease, now: now)
            let (a, b) = (try #require(held.first { $0.deviceID == "a" }), try #require(held.first { $0.deviceID == "b" }))
            // 3 + 3 × 400 characters, so the 500th is an "🙂"; "é" and "🙂" take 2 and 4 bytes in UTF-8.
            let long = "ab " + String(repeating: "é🙂x", count: 400)
            let short = String(repeating: "é", count: 500)
            #expect(try await store.giveUpWebhookEvent(id: a.id, owner: "node-1/x", attempts: 3, failure: long, now: now))
            #expect(try await store.giveUpWebhookEvent(id: b.id, owner: "node-1/x", attempts: 3, failure: short, now: now))
            let listed = try await store.givenUpWebhookEvents(appID: nil, limit: 10)
            let kept = Dictionary(uniqueKeysWithValues: listed.map { ($0.deviceID, $0.failure) })
            let keptLong = try #require(kept["a"])
            #expect(keptLong.count == 500 && long.hasPrefix(keptLong) && keptLong.hasSuffix("é🙂"))
            #expect(kept["b"] == short)
        }
    }
}

@Suite("Webhook outbox: SQLite", .serialized)
struct WebhookOutboxSQLiteTests {
    @Test func eventsAreWrittenWithWhatTheyReport() async throws {
        try await WebhookOutboxContract.eventsAreWrittenWithWhatTheyReport(SQLiteHarness())
    }
    @Test func leasesHoldOneNodeAtATime() async throws {
        try await WebhookOutboxContract.leasesHoldOneNodeAtATime(SQLiteHarness())
    }
    @Test func unknownTypesAreLeftForNodesThatKnowThem() async throws {
        try await WebhookOutboxContract.unknownTypesAreLeftForNodesThatKnowThem(SQLiteHarness())
    }
    @Test func givenUpEventsAreKeptUntilSentAgainOrPurged() async throws {
        try await WebhookOutboxContract.givenUpEventsAreKeptUntilSentAgainOrPurged(SQLiteHarness())
    }
    @Test func aGivenUpEventKeepsTheStartOfALongFailure() async throws {
        try await WebhookOutboxContract.aGivenUpEventKeepsTheStartOfALongFailure(SQLiteHarness())
    }
}

@Suite(
    "Webhook outbox: PostgreSQL", .serialized,
    .enabled(
        if: PostgresHarness.serverURL != nil,
        "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
struct WebhookOutboxPostgresTests {
    @Test func eventsAreWrittenWithWhatTheyReport() async throws {
        try await WebhookOutboxContract.eventsAreWrittenWithWhatTheyReport(try await PostgresHarness())
    }
    @Test func leasesHoldOneNodeAtATime() async throws {
        try await WebhookOutboxContract.leasesHoldOneNodeAtATime(try await PostgresHarness())
    }
    @Test func unknownTypesAreLeftForNodesThatKnowThem() async throws {
        try await WebhookOutboxContract.unknownTypesAreLeftForNodesThatKnowThem(try await PostgresHarness())
    }
    @Test func givenUpEventsAreKeptUntilSentAgainOrPurged() async throws {
        try await WebhookOutboxContract.givenUpEventsAreKeptUntilSentAgainOrPurged(try await PostgresHarness())
    }
    @Test func aGivenUpEventKeepsTheStartOfALongFailure() async throws {
        try await WebhookOutboxContract.aGivenUpEventKeepsTheStartOfALongFailure(try await PostgresHarness())
    }
}
