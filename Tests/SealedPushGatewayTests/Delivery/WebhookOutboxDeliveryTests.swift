import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// The webhook reading the store's outbox, against a real SQLite file and real HTTP receivers on loopback.
@Suite("Webhook outbox: events outlive a stop and a receiver that is down", .serialized)
struct WebhookOutboxDeliveryTests {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)

    /// Webhook settings posting to a receiver on loopback.
    static func configuration(
        port: Int, maxAttempts: Int = 20, initialBackoff: Duration = .milliseconds(20)
    ) throws -> UnregisteredWebhookConfiguration {
        var configuration = try UnregisteredWebhookConfiguration(
            url: URL(string: "http://127.0.0.1:\(port)/events")!, secret: secret)
        configuration.maxAttempts = maxAttempts
        configuration.initialBackoff = initialBackoff
        configuration.requestTimeout = .seconds(5)
        return configuration
    }

    /// A webhook reading `store`'s outbox as `owner`.
    static func webhook(
        _ configuration: UnregisteredWebhookConfiguration, store: any GatewayStore, owner: String,
        leaseDuration: Duration = .seconds(60)
    ) throws -> UnregisteredWebhook {
        var outbox = WebhookOutbox(store: store, owner: owner)
        outbox.leaseDuration = leaseDuration
        return try UnregisteredWebhook(
            configuration: configuration, logger: DeliveryFixture.quietLogger("webhook"), outbox: outbox)
    }

    static func webhook(port: Int, store: any GatewayStore, owner: String) throws -> UnregisteredWebhook {
        try webhook(try configuration(port: port), store: store, owner: owner)
    }

    /// A receiver that is down: every answer `503`.
    static func downReceiver() async throws -> WebhookReceiver {
        try await WebhookReceiver.start(answers: Array(repeating: 503, count: 1_000))
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Regression: a node that stopped while its receiver was down dropped the events it held (logged, counted, gone).
    /// With the outbox the event goes back to the store with its attempts, and the next node to read it — another
    /// process, a restart — posts it with the same `SealedPush-Delivery` id, then deletes it.
    @Test func anEventHeldAtAStopIsPostedByTheNextNode() async throws {
        try await withMigratedStore(try SQLiteHarness()) { store, fixtures in
            let event = try #require(try await WebhookOutboxContract.unregistered(["a"], store, fixtures)["a"])

            let down = try await Self.downReceiver()
            let first = try Self.webhook(port: down.port, store: store, owner: "node-1/boot-1")
            let running = Task { await first.run() }
            first.outboxWritten()
            try await Self.waitUntil { down.requests.count >= 2 }
            running.cancel()  // the node stops before its receiver is back
            await running.value
            let tried = down.requests
            await down.stop()
            #expect(tried.count >= 2)
            let deliveryIDs = Set(tried.compactMap { $0.header("SealedPush-Delivery") })
            #expect(deliveryIDs.count == 1)

            let up = try await WebhookReceiver.start(answers: [])
            let second = try Self.webhook(port: up.port, store: store, owner: "node-2/boot-1")
            let again = Task { await second.run() }
            try await Self.waitUntil { !up.requests.isEmpty }
            second.finish()
            await again.value
            let posted = up.requests
            await up.stop()
            #expect(posted.count == 1)
            #expect(posted.first?.header("SealedPush-Delivery") == deliveryIDs.first)
            #expect(posted.first?.body == event.jsonBody)
            // Delivered: gone from the outbox for every node, whatever the time.
            #expect(
                try await store.claimWebhookEvents(
                    owner: "node-3/boot-1", limit: 10, leaseDuration: .seconds(60), now: Date().addingTimeInterval(3_600)
                ).isEmpty)
        }
    }

    /// A graceful stop while the receiver is down gives the event back after one more attempt, rather than spending
    /// its attempts in the drain (whose retries wait at most 250 ms) and giving it up.
    @Test func aGracefulStopGivesEventsBackWithoutSpendingTheirAttempts() async throws {
        try await withMigratedStore(try SQLiteHarness()) { store, fixtures in
            try await WebhookOutboxContract.unregistered(["a"], store, fixtures)
            let down = try await Self.downReceiver()
            // The first retry would wait 15–30 s; the stop does not.
            let webhook = try Self.webhook(
                try Self.configuration(port: down.port, maxAttempts: 5, initialBackoff: .seconds(30)), store: store,
                owner: "node-1/boot-1")
            let running = Task { await webhook.run() }
            try await Self.waitUntil { !down.requests.isEmpty }
            let stopping = ContinuousClock.now
            webhook.finish()
            await running.value
            #expect(ContinuousClock.now - stopping < .seconds(5))
            let attempts = down.requests.count
            await down.stop()
            // The first, and one more when the stop woke its retry (none more if the stop came while the first was
            // still being answered) — not all 5.
            #expect((1...2).contains(attempts))
            let back = try await store.claimWebhookEvents(
                owner: "node-2/boot-1", limit: 10, leaseDuration: .seconds(60), now: Date())
            #expect(back.count == 1 && back.first?.attempts == attempts)
        }
    }

    /// Regression: a holder's attempts reached the outbox only when it gave the event back, so a node that died — or
    /// stopped while the database was unreachable — left its successor a count of 0, and the event was posted
    /// `maxAttempts` times more. Each failed attempt is now recorded before its retry: here the first node's give-back
    /// fails, and the two nodes together post the event `maxAttempts` times, then it is given up and gone.
    @Test func failedAttemptsOutliveAHolderThatCouldNotGiveThemBack() async throws {
        try await withMigratedStore(try SQLiteHarness()) { store, fixtures in
            try await WebhookOutboxContract.unregistered(["a"], store, fixtures)
            let down = try await Self.downReceiver()
            let configuration = try Self.configuration(port: down.port, maxAttempts: 6)
            let unreachable = HookedGatewayStore(
                inner: store,
                beforeWebhookRelease: { _ in throw GatewayStoreError(.database, "the database is unreachable") })
            let first = try Self.webhook(
                configuration, store: unreachable, owner: "node-1/boot-1", leaseDuration: .seconds(1))
            let running = Task { await first.run() }
            try await Self.waitUntil { down.requests.count >= 2 }
            first.finish()
            await running.value
            let byFirst = down.requests.count
            #expect((2..<6).contains(byFirst))
            let second = try Self.webhook(configuration, store: store, owner: "node-2/boot-1")
            let next = Task { await second.run() }
            let deadline = ContinuousClock.now.advanced(by: .seconds(15))
            while try await store.webhookOutboxDepth().waiting > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            second.finish()
            await next.value
            await down.stop()
            // Six attempts in all, never six more after the first node's (the regression posted byFirst + 6). The
            // receiver may have seen fewer: an attempt also counts when it failed before the whole request reached the
            // receiver (a timeout or a connection error under load; CI's thread-sanitizer run saw 5 requests for the
            // 6 attempts recorded below).
            #expect((byFirst + 1...6).contains(down.requests.count))
            #expect(Set(down.requests.map { $0.header("SealedPush-Delivery") }).count == 1)
            #expect(try await store.webhookOutboxDepth() == WebhookOutboxDepth(waiting: 0, givenUp: 1))
            #expect(try await store.givenUpWebhookEvents(appID: nil, limit: 10).first?.attempts == 6)
        }
    }

    /// A holder that finds, recording a failed attempt, that its lease went to another node (its renewals failed for
    /// a lease's length) stops retrying: the event is the other node's now, and two nodes retrying one event would
    /// spend its attempts twice as fast.
    @Test func aHolderWhoseLeaseWentToAnotherNodeStopsRetrying() async throws {
        try await withMigratedStore(try SQLiteHarness()) { store, fixtures in
            try await WebhookOutboxContract.unregistered(["a"], store, fixtures)
            let down = try await Self.downReceiver()
            var configuration = try Self.configuration(port: down.port, initialBackoff: .milliseconds(200))
            configuration.maxBackoff = .milliseconds(200)
            let webhook = try Self.webhook(configuration, store: store, owner: "node-1/boot-1")
            let running = Task { await webhook.run() }
            try await Self.waitUntil { !down.requests.isEmpty }
            // Another node takes the event as if node-1's lease had lapsed.
            let taken = try await store.claimWebhookEvents(
                owner: "node-2/boot-1", limit: 10, leaseDuration: .seconds(60), now: Date().addingTimeInterval(3_600))
            #expect(taken.count == 1)
            try await Task.sleep(for: .milliseconds(1_500))  // room for several retries 100–200 ms apart
            let posted = down.requests.count
            webhook.finish()
            await running.value
            await down.stop()
            // The first attempt, and one more when its record came before the take — then none.
            #expect((1...2).contains(posted))
            #expect(try await store.endWebhookEvent(id: try #require(taken.first).id, owner: "node-2/boot-1"))
        }
    }

    /// Two nodes read one outbox while events are written: 40 events, each posted exactly once (one delivery id
    /// each, every device's), none left.
    @Test func twoNodesPostEachEventOnce() async throws {
        try await Self.twoNodesPostEachEventOnce(try SQLiteHarness())
    }

    /// The same on PostgreSQL, where the nodes' claims skip each other's locked rows.
    @Test(
        .enabled(
            if: PostgresHarness.serverURL != nil,
            "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
    func twoNodesPostEachEventOnceOnPostgreSQL() async throws {
        try await Self.twoNodesPostEachEventOnce(try await PostgresHarness())
    }

    static func twoNodesPostEachEventOnce(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let devices = (0..<40).map { "d\($0)" }
            let jobs = try await WebhookOutboxContract.claimedJobs(devices, store, fixtures)
            let receiver = try await WebhookReceiver.start(answers: [], delay: .milliseconds(20))
            let nodes = try ["node-1/boot-1", "node-2/boot-1"].map {
                try Self.webhook(port: receiver.port, store: store, owner: $0)
            }
            let running = nodes.map { node in Task { await node.run() } }
            for device in devices {
                _ = try await store.finish([
                    JobFinish(
                        jobID: jobs[device]!.id, owner: "delivery/1", outcome: .unregistered(reason: "Unregistered"),
                        requests: 1, transientReason: nil, now: StoreFixtures.now,
                        webhookEvent: UnregisteredDeviceEvent(
                            appID: "alpha", deviceID: device, reason: "Unregistered", unregisteredAt: StoreFixtures.now))
                ])
                nodes[devices.firstIndex(of: device)! % 2].outboxWritten()
            }
            try await Self.waitUntil { receiver.requests.count >= devices.count }
            try await Task.sleep(for: .milliseconds(300))  // anything posted twice would arrive by now
            for node in nodes { node.finish() }
            for task in running { await task.value }
            let posted = receiver.requests
            await receiver.stop()
            #expect(posted.count == devices.count)
            #expect(Set(posted.compactMap { $0.header("SealedPush-Delivery") }).count == devices.count)
            let reached = Set(posted.compactMap { request in
                (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])?["deviceId"] as? String
            })
            #expect(reached == Set(devices))
            #expect(try await store.webhookOutboxDepth() == WebhookOutboxDepth(waiting: 0, givenUp: 0))
        }
    }

    /// Regression: a given-up event (a receiver that refused it, or down for longer than the retries last) was deleted
    /// from the outbox, so nothing could send it once the receiver was fixed. It is kept — never claimed again, listed
    /// with why — and the operator's redelivery has the next node post it, with the same delivery id, and end it.
    @Test func aGivenUpEventIsKeptUntilTheOperatorSendsItAgain() async throws {
        try await withMigratedStore(try SQLiteHarness()) { store, fixtures in
            try await WebhookOutboxContract.unregistered(["a"], store, fixtures)
            let receiver = try await WebhookReceiver.start(answers: [400])  // then 200
            let first = try Self.webhook(port: receiver.port, store: store, owner: "node-1/boot-1")
            let running = Task { await first.run() }
            try await Self.waitUntil { !receiver.requests.isEmpty }
            try await Task.sleep(for: .milliseconds(200))
            first.finish()
            await running.value
            #expect(receiver.requests.count == 1)
            #expect(
                try await store.claimWebhookEvents(
                    owner: "node-2/boot-1", limit: 10, leaseDuration: .seconds(60), now: Date().addingTimeInterval(3_600)
                ).isEmpty)
            let kept = try #require(try await store.givenUpWebhookEvents(appID: "alpha", limit: 10).first)
            #expect(kept.deviceID == "a" && kept.attempts == 1 && kept.failure.contains("400"))
            #expect(try await store.redeliverWebhookEvents(appID: nil, ids: nil) == 1)
            let second = try Self.webhook(port: receiver.port, store: store, owner: "node-2/boot-1")
            let again = Task { await second.run() }
            second.outboxWritten()
            try await Self.waitUntil { receiver.requests.count >= 2 }
            let deadline = ContinuousClock.now.advanced(by: .seconds(5))
            while try await store.webhookOutboxDepth() != WebhookOutboxDepth(waiting: 0, givenUp: 0),
                ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            second.finish()
            await again.value
            await receiver.stop()
            #expect(receiver.requests.count == 2)
            #expect(receiver.requests.map { $0.header("SealedPush-Delivery") } == [kept.deliveryID, kept.deliveryID])
            #expect(try await store.webhookOutboxDepth() == WebhookOutboxDepth(waiting: 0, givenUp: 0))
        }
    }
}
