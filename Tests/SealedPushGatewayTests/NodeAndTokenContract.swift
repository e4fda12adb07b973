import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushServer
import Testing

/// Store contract (issue 17): node incarnations and their leases, request counts with the last transient reason,
/// one registered device per APNs token. Run on every store by SQLiteStoreTests and PostgresStoreTests.
enum NodeAndTokenContract {
    static let now = StoreFixtures.now

    static func instance(_ nodeID: String, boot: String, pid: Int = 4242, heartbeatAt: Date = now) -> NodeInstance {
        NodeInstance(
            nodeID: nodeID, bootID: boot, host: "host-\(boot)", machineBootID: "machine", pid: pid, processStart: 77,
            startedAt: heartbeatAt, heartbeatAt: heartbeatAt)
    }

    /// A node that starts again takes back, at once, every lease an earlier incarnation of its node id held (its
    /// own boot ids and the bare node id of older gateways), and nobody else's; the record is compare-and-set, so
    /// of two starts replacing the same incarnation only one wins, and the loser's heartbeat says so.
    /// What `sealed-push-gateway status` reads: every node record, each app's open jobs with the oldest queued one's
    /// due time, and the claimed jobs per lease owner — counted here from what the test put in.
    static func nodesAndQueueSummary(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            #expect(try await store.nodes().isEmpty)
            #expect(try await store.queueSummary() == QueueSummary(apps: [], leases: [:]))
            let b = instance("node-b", boot: "b1", pid: 7)
            let a = instance("node-a", boot: "a1")
            #expect(try await store.takeOverNode(b, replacing: nil, now: now) == 0)
            #expect(try await store.takeOverNode(a, replacing: nil, now: now) == 0)
            #expect(try await store.nodes() == [a, b])

            let alpha = try await StoreFixtures.register(["a1", "a2", "a3", "a4", "a5"], in: "alpha", store)
            let beta = try await StoreFixtures.register(["b1", "b2"], in: "beta", store)
            _ = try await store.enqueue(fixtures.notification(appID: "alpha", to: alpha))  // due at `now`
            let lease = Duration.seconds(90)
            let byA = try await store.claim(owner: a.leaseOwner, limit: 2, leaseDuration: lease, now: now)
            let byB = try await store.claim(owner: b.leaseOwner, limit: 1, leaseDuration: lease, now: now)
            #expect(byA.count == 2 && byB.count == 1)
            _ = try await store.enqueue(fixtures.notification(appID: "beta", to: beta))
            let summary = try await store.queueSummary()
            #expect(summary.leases == [a.leaseOwner: 2, b.leaseOwner: 1])
            #expect(summary.apps.map(\.appID) == ["alpha", "beta"])
            #expect(summary.apps.first == QueueSummary.App(appID: "alpha", queued: 2, claimed: 3, oldestQueuedDue: now))
            #expect(summary.apps.last?.queued == 2 && summary.apps.last?.claimed == 0)
            // An app with every job ended is not listed; one with only claimed jobs has no oldest queued one.
            for job in byA { _ = try await store.finish(jobID: job.id, owner: a.leaseOwner, outcome: .sent(apnsID: "x"), now: now) }
            for job in byB { _ = try await store.finish(jobID: job.id, owner: b.leaseOwner, outcome: .sent(apnsID: "x"), now: now) }
            let left = try await store.claim(owner: a.leaseOwner, limit: 10, leaseDuration: lease, now: now)
            #expect(left.count == 4)
            let claimedOnly = try await store.queueSummary()
            #expect(claimedOnly.apps == [
                QueueSummary.App(appID: "alpha", queued: 0, claimed: 2, oldestQueuedDue: nil),
                QueueSummary.App(appID: "beta", queued: 0, claimed: 2, oldestQueuedDue: nil),
            ])
            #expect(claimedOnly.leases == [a.leaseOwner: 4])
        }
    }

    static func restartTakesBackItsLeases(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            #expect(try await store.node(id: "gw") == nil)
            let first = instance("gw", boot: "boot-1")
            #expect(try await store.takeOverNode(first, replacing: nil, now: now) == 0)
            #expect(try await store.takeOverNode(instance("gw", boot: "intruder"), replacing: nil, now: now) == nil)
            let recorded = try #require(try await store.node(id: "gw"))
            #expect(recorded == first)
            #expect(first.leaseOwner == "gw/boot-1")

            let keys = try await StoreFixtures.register(["a", "b", "c", "d", "e", "f"], in: "alpha", store)
            _ = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys))
            let lease = Duration.seconds(90)
            let mine = try await store.claim(owner: first.leaseOwner, limit: 3, leaseDuration: lease, now: now)
            let legacy = try await store.claim(owner: "gw", limit: 1, leaseDuration: lease, now: now)
            let lookalike = try await store.claim(owner: "gw-2/boot-9", limit: 1, leaseDuration: lease, now: now)
            let other = try await store.claim(owner: "gwx", limit: 1, leaseDuration: lease, now: now)
            #expect(mine.count == 3 && legacy.count == 1 && lookalike.count == 1 && other.count == 1)
            let leased = try await store.leasedJobs(nodeID: "gw")
            #expect(Set(leased.map(\.id)) == Set((mine + legacy).map(\.id)))
            #expect(Set(leased.map(\.owner)) == ["gw/boot-1", "gw"])
            #expect(try await store.heartbeat(first, now: now.addingTimeInterval(2)))
            #expect(try await store.node(id: "gw")?.heartbeatAt == now.addingTimeInterval(2))

            // The restart (boot-2) replaces boot-1: its 3 leases and the legacy one come back at once.
            let t = now.addingTimeInterval(5)
            let second = instance("gw", boot: "boot-2", heartbeatAt: t)
            #expect(try await store.takeOverNode(second, replacing: "boot-1", now: t) == 4)
            #expect(try await store.node(id: "gw")?.bootID == "boot-2")
            #expect(try await store.leasedJobs(nodeID: "gw").isEmpty)
            // A third start that read boot-1 too loses the race; boot-1's heartbeat says it was replaced.
            #expect(try await store.takeOverNode(instance("gw", boot: "boot-3"), replacing: "boot-1", now: t) == nil)
            #expect(try await store.heartbeat(first, now: t) == false)
            #expect(try await store.heartbeat(second, now: t))
            // Claimable now, long before the 90 s leases would have ended; attempts kept.
            let again = try await store.claim(owner: second.leaseOwner, limit: 10, leaseDuration: lease, now: t)
            #expect(Set(again.map(\.id)) == Set((mine + legacy).map(\.id)))
            #expect(again.allSatisfy { $0.attempts == 2 })
            // Other nodes' leases were not touched.
            #expect(try await store.leasedJobs(nodeID: "gw-2").map(\.id) == lookalike.map(\.id))
            #expect(try await store.leasedJobs(nodeID: "gwx").map(\.id) == other.map(\.id))
            // A clean stop deletes only its own record.
            try await store.releaseNode(first)
            #expect(try await store.node(id: "gw")?.bootID == "boot-2")
            try await store.releaseNode(second)
            #expect(try await store.node(id: "gw") == nil)
        }
    }

    /// `attempts` counts APNs requests (what each claim reported, plus one while claimed) and the job keeps the
    /// last transient reason.
    static func requestsAndTransientReason(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a"], in: "alpha", store)
            let sent = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys))
            func delivery() async throws -> NotificationStatus.Delivery {
                try #require(try await store.notificationStatus(appID: "alpha", notificationID: sent.id)?.deliveries.first)
            }
            #expect(try await delivery().attempts == 0)
            let job = try #require(try await store.claim(owner: "w", limit: 1, leaseDuration: .seconds(60), now: now).first)
            #expect(try await delivery().attempts == 1)  // in flight
            #expect(
                try await store.finish(
                    jobID: job.id, owner: "w", outcome: .retry(reason: "TooManyRequests", notBefore: now),
                    requests: 3, transientReason: "TooManyRequests", now: now))
            var state = try await delivery()
            #expect(state.attempts == 3)
            #expect(state.lastTransientReason == "TooManyRequests")
            let again = try #require(try await store.claim(owner: "w", limit: 1, leaseDuration: .seconds(60), now: now).first)
            #expect(try await delivery().attempts == 4)
            #expect(
                try await store.finish(
                    jobID: again.id, owner: "w", outcome: .sent(apnsID: "6f1c2a58-2f4e-4a53-9a0c-1f1f8f0e9a10"),
                    requests: 2, transientReason: "ConnectionLost", now: now))
            state = try await delivery()
            #expect(state.state == .sent)
            #expect(state.attempts == 5)
            #expect(state.lastTransientReason == "ConnectionLost")
        }
    }

    /// One APNs token, one registered device per app and environment: registering it under another device id
    /// moves it (the old device is marked unregistered and its open jobs end), a send to both queues one job, and
    /// other apps and the other environment are not touched.
    static func tokenBelongsToOneDevice(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let token = StoreFixtures.token(5)
            var keys: [String: DevicePublicKey] = [:]
            func put(_ app: String, _ device: String, _ environment: APNsEnvironment, at offset: TimeInterval) async throws
                -> DevicePutResult
            {
                let (key, registration) = try StoreFixtures.registration()
                keys[device] = key
                return try await store.putDevice(
                    appID: app, deviceID: device, apnsToken: token, environment: environment, registration: registration,
                    now: now.addingTimeInterval(offset))
            }
            #expect(try await put("alpha", "old-id", .sandbox, at: 0).tokenTakenFrom.isEmpty)
            #expect(try await put("beta", "elsewhere", .sandbox, at: 1).tokenTakenFrom.isEmpty)
            #expect(try await put("alpha", "prod", .production, at: 2).tokenTakenFrom.isEmpty)
            let early = try await store.enqueue(fixtures.notification(appID: "alpha", to: ["old-id": keys["old-id"]!]))

            // The phone reinstalled the app: a new device id, the same token.
            let moved = try await put("alpha", "new-id", .sandbox, at: 10)
            #expect(moved.tokenTakenFrom == ["old-id"])
            let old = try #require(try await store.device(appID: "alpha", deviceID: "old-id"))
            #expect(old.unregisteredAt == now.addingTimeInterval(10))
            #expect(try await store.device(appID: "alpha", deviceID: "new-id")?.unregisteredAt == nil)
            #expect(try await store.device(appID: "alpha", deviceID: "prod")?.unregisteredAt == nil)
            #expect(try await store.device(appID: "beta", deviceID: "elsewhere")?.unregisteredAt == nil)
            let earlyJob = try #require(try await store.notificationStatus(appID: "alpha", notificationID: early.id)?.deliveries.first)
            #expect(earlyJob.state == .unregistered)
            #expect(earlyJob.reason == DevicePutResult.tokenMovedReason)

            // A send naming both device ids queues one job for the token.
            let both = try await store.enqueue(
                fixtures.notification(appID: "alpha", to: ["old-id": keys["old-id"]!, "new-id": keys["new-id"]!]))
            let states = try #require(try await store.notificationStatus(appID: "alpha", notificationID: both.id))
                .deliveries.map { "\($0.deviceID):\($0.state.rawValue)" }
            #expect(states == ["new-id:queued", "old-id:unregistered"])
            let claimed = try await store.claim(owner: "w", limit: 10, leaseDuration: .seconds(60), now: now.addingTimeInterval(20))
            #expect(claimed.filter { $0.apnsToken == token && $0.environment == .sandbox }.count == 1)

            // The old id registering the token again takes it back.
            #expect(try await put("alpha", "old-id", .sandbox, at: 30).tokenTakenFrom == ["new-id"])
            #expect(try await store.device(appID: "alpha", deviceID: "old-id")?.unregisteredAt == nil)
            #expect(try await store.device(appID: "alpha", deviceID: "new-id")?.unregisteredAt != nil)
            // Re-registering the same device with the same token takes nothing from anyone.
            #expect(try await put("alpha", "old-id", .sandbox, at: 40).tokenTakenFrom.isEmpty)
        }
    }

    /// A job is committed only if its device still has the registration it was sealed to (its key id, and the
    /// platform of its body's form): a sender may seal from a device record it read earlier, and a device registered
    /// again meanwhile refuses that notification alone (`deviceKeyChanged`, nothing written), never commits an
    /// envelope its device cannot open. A job without a key id is not checked.
    static func enqueueChecksTheRegistrationSealedTo(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            var keys = try await StoreFixtures.register(["a", "b"], in: "alpha", store)
            let (newKey, registration) = try StoreFixtures.registration()
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "a", apnsToken: StoreFixtures.token(0), environment: .sandbox,
                registration: registration, now: now.addingTimeInterval(1))
            let stale = try fixtures.notification(appID: "alpha", to: ["b": keys["b"]!, "a": keys["a"]!])
            let toB = try fixtures.notification(appID: "alpha", to: ["b": keys["b"]!])
            let results = try await store.enqueueBatch([stale, toB])
            #expect(throws: Never.self) { try results[1].get() }
            guard case .failure(let refused) = results[0] else {
                Issue.record("a job sealed to a replaced key was committed")
                return
            }
            #expect(refused.code == .deviceKeyChanged && refused.field == "devices[0]", "\(refused)")  // "a" sorts first
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: stale.id) == nil)
            await #expect(throws: GatewayStoreError.self) { try await store.enqueue(stale) }

            keys["a"] = newKey
            #expect(try await store.enqueue(try fixtures.notification(appID: "alpha", to: keys)).jobCount == 2)
            // Unchecked without a key id (what a sender that does not say which key it sealed to enqueues).
            var unchecked = stale
            unchecked.jobs = unchecked.jobs.map { job in
                var job = job
                job.keyID = nil
                job.messageID = nil
                return job
            }
            #expect(try await store.enqueue(unchecked).jobCount == 2)

            // The current key, but in the other platform's form: the device is an iPhone.
            var wrongPlatform = try fixtures.notification(appID: "alpha", to: ["b": keys["b"]!])
            let envelope = try APNsPayload.extractEnvelope(fromBody: wrongPlatform.jobs[0].body.bytes)
            wrongPlatform.jobs[0].body = try SealedBody(fcmEnvelopeText: Base64URL.encode(envelope))
            let platform = try await store.enqueueBatch([wrongPlatform])
            guard case .failure(let changed) = platform[0] else {
                Issue.record("an FCM body was committed for an APNs device")
                return
            }
            #expect(changed.code == .deviceKeyChanged)
        }
    }

    /// Jobs enqueued under a lease (a node handing a send's jobs to its own delivery, `DeliveryService.reserve`)
    /// go in claimed by the lease's owner and come back as a claim would hand them: the expectation is a claim of
    /// the same notification enqueued without a lease. Jobs of unregistered devices stay `unregistered`; nobody
    /// else claims them before the lease ends; the owner finishes them; a later claim takes them over after the
    /// lease; a replay claims nothing; a lease must end after the notification's creation.
    static func enqueueUnderLease(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b", "c"], in: "alpha", store)
            #expect(try await store.markDeviceUnregistered(appID: "alpha", deviceID: "c", reason: "Unregistered", at: now))
            let lease = JobLease(owner: "gw/boot-1", expiresAt: now.addingTimeInterval(90))
            var leased = try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "k-1")
            leased.lease = lease
            // The expectation: the same notification (another id) enqueued queued, then claimed by the same owner.
            var plain = leased
            plain.id = UUID()
            plain.idempotencyKey = "k-2"
            plain.collapseID = leased.collapseID
            plain.lease = nil
            plain.jobs = plain.jobs.map { job in
                var job = job
                job.messageID = nil  // a message id is taken once per app
                return job
            }
            let results = try await store.enqueueBatch([leased, plain])
            let claimedAtEnqueue = try results[0].get().claimed
            #expect(try results[1].get().claimed.isEmpty, "no lease, nothing claimed")
            let claimedLater = try await store.claim(
                owner: lease.owner, limit: 10, leaseDuration: .seconds(90), now: now)
            #expect(claimedLater.map(\.notificationID) == [plain.id, plain.id])
            #expect(claimedAtEnqueue.map(\.deviceID) == ["a", "b"], "c is unregistered")
            for (early, late) in zip(claimedAtEnqueue, claimedLater) {
                #expect(early.notificationID == leased.id)
                #expect(early.deviceID == late.deviceID && early.appID == late.appID && early.address == late.address)
                #expect(early.priority == late.priority && early.collapseID == late.collapseID)
                #expect(early.expiresAt == late.expiresAt && early.attempts == late.attempts)
                #expect(early.leaseExpiresAt == late.leaseExpiresAt)
                #expect(early.body == leased.jobs.first { $0.deviceID == early.deviceID }?.body)
            }
            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: leased.id))
            let states = Dictionary(uniqueKeysWithValues: status.deliveries.map { ($0.deviceID, $0.state) })
            #expect(states == ["a": .claimed, "b": .claimed, "c": .unregistered])
            #expect(
                Set(try await store.leasedJobs(nodeID: "gw").filter { $0.notificationID == leased.id }.map(\.owner))
                    == [lease.owner])
            // Nobody else takes them while the lease runs.
            #expect(try await store.claim(owner: "gw-2/boot-1", limit: 10, leaseDuration: .seconds(90), now: now).isEmpty)
            // The owner ends one; the other is taken over once the lease has ended, as a second attempt.
            let first = claimedAtEnqueue[0], second = claimedAtEnqueue[1]
            #expect(try await store.finish(jobID: first.id, owner: "gw-2/boot-1", outcome: .sent(apnsID: "x"), now: now) == false)
            #expect(try await store.finish(jobID: first.id, owner: lease.owner, outcome: .sent(apnsID: "apns-1"), now: now))
            let after = lease.expiresAt.addingTimeInterval(1)
            let takenOver = try await store.claim(owner: "gw-2/boot-1", limit: 10, leaseDuration: .seconds(90), now: after)
            #expect(takenOver.map(\.id).contains(second.id))
            #expect(takenOver.first { $0.id == second.id }?.attempts == 2)
            #expect(!takenOver.map(\.id).contains(first.id))
            // A replay of the key claims nothing (the first request's jobs are where they are).
            var replay = leased
            replay.id = UUID()
            let replayed = try await store.enqueue(replay)
            #expect(replayed.replayed && replayed.id == leased.id && replayed.claimed.isEmpty)
            // A lease that ends before the notification was created is refused.
            var stale = try fixtures.notification(appID: "alpha", to: ["a": keys["a"]!])
            stale.lease = JobLease(owner: "gw/boot-1", expiresAt: now)
            await #expect(throws: GatewayStoreError.self) { try await store.enqueue(stale) }
        }
    }
}
