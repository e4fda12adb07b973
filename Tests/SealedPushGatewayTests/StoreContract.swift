import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushServer
import Testing

/// The store tests, written once and run against every ``GatewayStore`` (SQLiteStoreTests, PostgresStoreTests).
enum StoreContract {
    static let now = StoreFixtures.now

    // MARK: Migrations

    static func migrationsFromEmptyAndRerun(_ harness: any StoreHarness) async throws {
        let store = try await harness.makeStore()
        #expect(try await store.schemaVersion() == 0)
        let applied = try await store.migrate()
        #expect(applied >= 1)
        #expect(try await store.schemaVersion() == applied)
        // Re-run in the same process, then from a "restarted" process and from two nodes at once.
        #expect(try await store.migrate() == 0)
        let restarted = try await harness.makeStore()
        let other = try await harness.makeStore()
        async let first = restarted.migrate()
        async let second = other.migrate()
        #expect(try await first + second == 0)
        #expect(try await restarted.schemaVersion() == applied)
        // The schema works after the re-runs.
        try await store.putApp(StoreFixtures.app("alpha"), now: now)
        #expect(try await restarted.app(id: "alpha") == StoreFixtures.app("alpha"))
        // A database migrated by a newer gateway is refused, not altered.
        try await harness.execute("INSERT INTO schema_version (version, name, applied_at) VALUES (999, 'future', 0)")
        await #expect {
            try await other.migrate()
        } throws: { ($0 as? GatewayStoreError)?.code == .schemaTooNew }
        for each in [store, restarted, other] { try await each.close() }
        try await harness.tearDown()
    }

    // MARK: Devices

    static func lastArrivedRegistrationWins(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, _ in
            // Made while the device clock said 2036: arrives first.
            let (_, wrongClock) = try StoreFixtures.registration(createdAt: Date(timeIntervalSince1970: 2_100_000_000))
            let (_, rotated) = try StoreFixtures.registration(createdAt: now)
            let first = try await store.putDevice(
                appID: "alpha", deviceID: "phone", apnsToken: StoreFixtures.token(1), environment: .sandbox,
                registration: wrongClock, now: now)
            #expect(first.created)
            let second = try await store.putDevice(
                appID: "alpha", deviceID: "phone", apnsToken: StoreFixtures.token(2), environment: .production,
                registration: rotated, now: now.addingTimeInterval(60))
            #expect(!second.created)
            var device = try #require(try await store.device(appID: "alpha", deviceID: "phone"))
            #expect(device.registration == rotated)  // arrival order, not createdAt
            #expect(device.apnsToken == StoreFixtures.token(2))
            #expect(device.environment == .production)
            #expect(device.registeredAt == now.addingTimeInterval(60))
            // Re-sending the older record makes its key current again.
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "phone", apnsToken: StoreFixtures.token(2), environment: .production,
                registration: wrongClock, now: now.addingTimeInterval(120))
            device = try #require(try await store.device(appID: "alpha", deviceID: "phone"))
            #expect(device.registration.keyId == wrongClock.keyId)
            #expect(device.registration.createdAt == wrongClock.createdAt)
            // An app that does not exist is refused.
            await #expect {
                try await store.putDevice(
                    appID: "nope", deviceID: "x", apnsToken: StoreFixtures.token(1), environment: .sandbox,
                    registration: rotated, now: now)
            } throws: { ($0 as? GatewayStoreError)?.code == .unknownApp }
        }
    }

    static func removeDevice(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["phone", "tablet"], in: "alpha", store)
            let sent = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys))
            #expect(try await store.removeDevice(appID: "alpha", deviceID: "phone", now: now))
            #expect(try await store.device(appID: "alpha", deviceID: "phone") == nil)
            #expect(try await store.removeDevice(appID: "alpha", deviceID: "phone", now: now) == false)
            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: sent.id))
            #expect(status.deliveries.map(\.state) == [.unregistered, .queued])  // phone, tablet
            #expect(status.deliveries[0].reason == "DeviceRemoved")
            let claimed = try await store.claim(owner: "w", limit: 10, leaseDuration: .seconds(30), now: now)
            #expect(claimed.map(\.deviceID) == ["tablet"])
        }
    }

    // MARK: API keys

    static func apiKeys(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, _ in
            let key = APIKey.generate()
            try await store.addAPIKey(StoredAPIKey(key: key, appID: "alpha", label: "ci", createdAt: now))
            #expect(try await store.authenticate(bearer: key.text) == "alpha")
            // Same id, one character of the secret changed: refused.
            var wrong = Array(key.text)
            wrong[wrong.count - 1] = wrong[wrong.count - 1] == "A" ? "B" : "A"
            #expect(try await store.authenticate(bearer: String(wrong)) == nil)
            #expect(try await store.authenticate(bearer: APIKey.generate().text) == nil)  // unknown id
            #expect(try await store.authenticate(bearer: "") == nil)
            #expect(try await store.authenticate(bearer: key.id) == nil)
            let stored = try #require(try await store.apiKey(id: key.id))
            #expect(stored.digest.count == 32 && stored.appID == "alpha" && stored.label == "ci")
            // The key itself is not in the database, only its digest.
            for (name, bytes) in try await harness.rawContents() {
                let found = bytes.contains(bytes: Array(key.text.utf8))
                #expect(!found, "API key text found in \(name)")
            }
            #expect(try await store.removeAPIKey(id: key.id))
            #expect(try await store.authenticate(bearer: key.text) == nil)
            await #expect {
                try await store.addAPIKey(StoredAPIKey(key: APIKey.generate(), appID: "nope", createdAt: now))
            } throws: { ($0 as? GatewayStoreError)?.code == .unknownApp }
        }
    }

    /// Issue 17 §11: keys listed per app (or all), an expired key refused like an unknown one, the last use kept
    /// only when later than the recorded one.
    static func apiKeyExpiryListAndLastUse(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, _ in
            let ci = APIKey.generate(), old = APIKey.generate(), beta = APIKey.generate()
            try await store.addAPIKey(StoredAPIKey(key: ci, appID: "alpha", label: "ci", createdAt: now))
            try await store.addAPIKey(
                StoredAPIKey(
                    key: old, appID: "alpha", label: "old", createdAt: now.addingTimeInterval(1),
                    expiresAt: now.addingTimeInterval(60)))
            try await store.addAPIKey(StoredAPIKey(key: beta, appID: "beta", label: "b", createdAt: now))
            #expect(try await store.apiKeys(appID: "alpha").map(\.label) == ["ci", "old"])
            #expect(try await store.apiKeys(appID: nil).map(\.appID) == ["alpha", "alpha", "beta"])
            #expect(try await store.apiKeys(appID: "nope").isEmpty)
            #expect(try await store.apiKey(id: old.id)?.expiresAt == now.addingTimeInterval(60))

            #expect(try await store.authenticate(bearer: old.text, now: now.addingTimeInterval(59)) == "alpha")
            #expect(try await store.authenticate(bearer: old.text, now: now.addingTimeInterval(60)) == nil)
            #expect(try await store.authenticate(bearer: ci.text, now: now.addingTimeInterval(1e9)) == "alpha")

            #expect(try await store.apiKey(id: ci.id)?.lastUsedAt == nil)
            try await store.touchAPIKey(id: ci.id, at: now.addingTimeInterval(10))
            try await store.touchAPIKey(id: ci.id, at: now.addingTimeInterval(5))  // a slower node: kept the later
            #expect(try await store.apiKey(id: ci.id)?.lastUsedAt == now.addingTimeInterval(10))
            #expect(try await store.apiKey(id: beta.id)?.lastUsedAt == nil)
        }
    }

    // MARK: Apps

    /// Issue 17 §11: an app's previous server identities are stored in order; removing an app removes its keys,
    /// devices, notifications and jobs in one go, counts them, and leaves the other app as it was.
    static func removeAppAndPreviousIdentities(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            var alpha = StoreFixtures.app("alpha")
            alpha.previousIdentityPaths = ["/etc/sealed-push/alpha-1.spsk", "/etc/sealed-push/alpha-2.spsk"]
            try await store.putApp(alpha, now: now)
            #expect(try await store.app(id: "alpha")?.previousIdentityPaths == alpha.previousIdentityPaths)
            #expect(try await store.app(id: "beta")?.previousIdentityPaths == [])

            let alphaKey = APIKey.generate(), betaKey = APIKey.generate()
            try await store.addAPIKey(StoredAPIKey(key: alphaKey, appID: "alpha", label: "a", createdAt: now))
            try await store.addAPIKey(StoredAPIKey(key: betaKey, appID: "beta", label: "b", createdAt: now))
            let alphaDevices = try await StoreFixtures.register(["a1", "a2", "a3"], in: "alpha", store)
            let betaDevices = try await StoreFixtures.register(["b1"], in: "beta", store)
            let sentNotification = try fixtures.notification(appID: "alpha", to: alphaDevices)
            let sent = try await store.enqueue(sentNotification)
            let beta = try await store.enqueue(fixtures.notification(appID: "beta", to: betaDevices))
            _ = try await store.enqueue(fixtures.notification(appID: "alpha", to: ["a1": alphaDevices["a1"]!]))

            let removal = try #require(try await store.removeApp(id: "alpha"))
            #expect(removal == AppRemoval(appID: "alpha", devices: 3, apiKeys: 1, notifications: 2, openJobs: 4))
            #expect(try await store.app(id: "alpha") == nil)
            #expect(try await store.apiKeys(appID: "alpha").isEmpty)
            #expect(try await store.authenticate(bearer: alphaKey.text) == nil)
            #expect(try await store.device(appID: "alpha", deviceID: "a1") == nil)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: sent.id) == nil)
            #expect(try await store.removeApp(id: "alpha") == nil)
            // No job's message id outlives its app (PostgreSQL's rows; a SQLite file keeps deleted bytes).
            let rows = harness is PostgresHarness ? try await harness.rawContents() : []
            for messageID in sentNotification.jobs.compactMap(\.messageID) {
                #expect(!rows.contains { $0.bytes.contains(bytes: Array(messageID.utf8)) }, "message id \(messageID) kept")
            }
            // Beta is untouched, and only its job is left to deliver.
            #expect(try await store.app(id: "beta") == StoreFixtures.app("beta"))
            #expect(try await store.authenticate(bearer: betaKey.text) == "beta")
            #expect(try await store.notificationStatus(appID: "beta", notificationID: beta.id)?.deliveries.count == 1)
            let left = try await store.claim(owner: "node-a", limit: 10, leaseDuration: .seconds(60), now: now)
            #expect(left.map(\.appID) == ["beta"])
        }
    }

    // MARK: Isolation between apps

    static func appsAreIsolated(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let alphaKeys = try await StoreFixtures.register(["shared", "only-alpha"], in: "alpha", store)
            var betaKeys = try await StoreFixtures.register(["shared", "only-beta"], in: "beta", store)
            let (betaSharedKey, betaShared) = try StoreFixtures.registration()
            _ = try await store.putDevice(
                appID: "beta", deviceID: "shared", apnsToken: StoreFixtures.token(99), environment: .production,
                registration: betaShared, now: now)
            betaKeys["shared"] = betaSharedKey  // what beta's sends seal to from now on
            #expect(try await store.device(appID: "alpha", deviceID: "shared")?.apnsToken == StoreFixtures.token(0))
            #expect(try await store.device(appID: "beta", deviceID: "shared")?.apnsToken == StoreFixtures.token(99))
            #expect(try await store.device(appID: "alpha", deviceID: "only-beta") == nil)
            #expect(try await store.devices(appID: "alpha", deviceIDs: ["only-beta", "shared", "only-alpha"])
                .map(\.deviceID) == ["only-alpha", "shared"])
            #expect(try await store.removeDevice(appID: "alpha", deviceID: "only-beta", now: now) == false)
            #expect(try await store.device(appID: "beta", deviceID: "only-beta") != nil)
            #expect(try await store.markDeviceUnregistered(appID: "alpha", deviceID: "only-beta", reason: "x", at: now) == false)
            #expect(try await store.device(appID: "beta", deviceID: "only-beta")?.unregisteredAt == nil)
            // Alpha cannot send to beta's device, and learns only that alpha has no such device.
            var crossing = try fixtures.notification(appID: "alpha", to: ["shared": alphaKeys["shared"]!])
            crossing.jobs.append(
                NewNotification.Job(deviceID: "only-beta", body: try fixtures.notification(appID: "beta", to: ["only-beta": betaKeys["only-beta"]!]).jobs[0].body))
            await #expect {
                try await store.enqueue(crossing)
            } throws: { error in
                let error = error as? GatewayStoreError
                return error?.code == .unknownDevice && error?.field == "devices[1]"
            }
            // Notifications and idempotency keys are per app.
            let beta = try await store.enqueue(fixtures.notification(appID: "beta", to: betaKeys, idempotencyKey: "k1"))
            let alpha = try await store.enqueue(fixtures.notification(appID: "alpha", to: alphaKeys, idempotencyKey: "k1"))
            #expect(!alpha.replayed && !beta.replayed && alpha.id != beta.id)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: beta.id) == nil)
            #expect(try await store.notificationStatus(appID: "beta", notificationID: beta.id)?.deliveries.count == 2)
            #expect(try await store.notificationID(appID: "alpha", idempotencyKey: "k1") == alpha.id)
            #expect(try await store.notificationID(appID: "beta", idempotencyKey: "k1") == beta.id)
        }
    }

    /// Users: a device's user is stored with it and replaced by each registration; a user's sendable devices are
    /// found per app, never an unregistered one or another app's.
    static func usersDevices(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, _ in
            _ = try await StoreFixtures.register(["d"], in: "alpha", store)  // no user
            for (index, (device, user)) in [("a", "u1"), ("b", "u1"), ("c", "u2")].enumerated() {
                _ = try await store.putDevice(
                    appID: "alpha", deviceID: device, apnsToken: StoreFixtures.token(10 + index), environment: .sandbox,
                    registration: StoreFixtures.registration().1, userID: user, now: now)
            }
            _ = try await store.putDevice(
                appID: "beta", deviceID: "x", apnsToken: StoreFixtures.token(20), environment: .sandbox,
                registration: StoreFixtures.registration().1, userID: "u1", now: now)
            #expect(try await store.device(appID: "alpha", deviceID: "c")?.userID == "u2")
            #expect(try await store.device(appID: "alpha", deviceID: "d")?.userID == nil)
            #expect(try await store.devices(appID: "alpha", userIDs: ["u1"]).map(\.deviceID) == ["a", "b"])
            #expect(try await store.devices(appID: "alpha", userIDs: ["u2", "u1", "nobody"]).map(\.deviceID) == ["a", "b", "c"])
            #expect(try await store.devices(appID: "beta", userIDs: ["u1"]).map(\.deviceID) == ["x"])
            #expect(try await store.devices(appID: "alpha", userIDs: []).isEmpty)
            // A new registration without a user takes the device out of the user's set.
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "b", apnsToken: StoreFixtures.token(11), environment: .sandbox,
                registration: StoreFixtures.registration().1, now: now)
            #expect(try await store.devices(appID: "alpha", userIDs: ["u1"]).map(\.deviceID) == ["a"])
            // An unregistered device is not sendable; registering again makes it so.
            #expect(try await store.markDeviceUnregistered(appID: "alpha", deviceID: "a", reason: "Unregistered", at: now))
            #expect(try await store.devices(appID: "alpha", userIDs: ["u1"]).isEmpty)
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "a", apnsToken: StoreFixtures.token(12), environment: .sandbox,
                registration: StoreFixtures.registration().1, userID: "u1", now: now)
            #expect(try await store.devices(appID: "alpha", userIDs: ["u1"]).map(\.deviceID) == ["a"])
        }
    }

    /// Removing a user removes all of that user's devices in the app (an unregistered one too), ends their open
    /// jobs, and touches nothing else.
    static func removeUserDevices(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            var keys: [String: DevicePublicKey] = [:]
            for (index, (device, user)) in [("a", "u1"), ("b", "u1"), ("c", "u2")].enumerated() {
                let (key, registration) = try StoreFixtures.registration()
                _ = try await store.putDevice(
                    appID: "alpha", deviceID: device, apnsToken: StoreFixtures.token(10 + index), environment: .sandbox,
                    registration: registration, userID: user, now: now)
                keys[device] = key
            }
            _ = try await store.putDevice(
                appID: "beta", deviceID: "x", apnsToken: StoreFixtures.token(20), environment: .sandbox,
                registration: StoreFixtures.registration().1, userID: "u1", now: now)
            #expect(try await store.markDeviceUnregistered(appID: "alpha", deviceID: "b", reason: "Unregistered", at: now))
            let queued = try await store.enqueue(fixtures.notification(appID: "alpha", to: ["a": keys["a"]!, "c": keys["c"]!]))

            #expect(try await store.removeDevices(appID: "alpha", userID: "u1", now: now) == ["a", "b"])
            #expect(try await store.device(appID: "alpha", deviceID: "a") == nil)
            #expect(try await store.device(appID: "alpha", deviceID: "b") == nil)
            #expect(try await store.device(appID: "alpha", deviceID: "c") != nil)
            #expect(try await store.device(appID: "beta", deviceID: "x") != nil)
            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: queued.id))
            #expect(status.deliveries.map(\.state) == [.unregistered, .queued])
            #expect(status.deliveries.first?.reason == "DeviceRemoved")
            #expect(try await store.removeDevices(appID: "alpha", userID: "u1", now: now).isEmpty)
        }
    }

    // MARK: Idempotency

    static func idempotency(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b", "c"], in: "alpha", store)
            let first = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "order-1"))
            #expect(!first.replayed && first.jobCount == 3)
            let retry = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "order-1"))
            #expect(retry == EnqueueResult(id: first.id, replayed: true, jobCount: 3))
            #expect(try await store.queueDepth() == QueueDepth(queued: 3, claimed: 0))
            // Concurrent retries from several "nodes": one wins, all answer its id.
            let other = try await harness.makeStore()
            let requests = try (0..<6).map { _ in
                try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "order-2")
            }
            let results = try await withThrowingTaskGroup(of: EnqueueResult.self) { group in
                for (index, request) in requests.enumerated() {
                    let target = index.isMultiple(of: 2) ? store : other
                    group.addTask { try await target.enqueue(request) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await other.close()
            #expect(Set(results.map(\.id)).count == 1)
            #expect(results.filter { !$0.replayed }.count == 1)
            #expect(requests.map(\.id).contains(results[0].id))
            #expect(try await store.queueDepth().queued == 6)
        }
    }

    /// A batch (the send endpoint's group commit) answers each notification as one at a time would, in order: one
    /// refused (an unknown device, no device) is refused alone and writes nothing; of two with one idempotency key,
    /// one is committed and the other replays it.
    static func enqueueBatch(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b"], in: "alpha", store)
            let good = try fixtures.notification(appID: "alpha", to: keys)
            var unknown = try fixtures.notification(appID: "alpha", to: keys)
            unknown.jobs.append(NewNotification.Job(deviceID: "nobody", body: unknown.jobs[0].body))
            var empty = try fixtures.notification(appID: "alpha", to: keys)
            empty.jobs = []
            let keyed = try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "k")
            let again = try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "k")
            let results = try await store.enqueueBatch([good, unknown, empty, keyed, again])
            #expect(results.count == 5)
            #expect((try? results[0].get()) == EnqueueResult(id: good.id, replayed: false, jobCount: 2))
            if case .failure(let error) = results[1] {
                #expect(error.code == .unknownDevice && error.field == "devices[2]")
            } else { Issue.record("a notification to an unknown device was committed") }
            if case .failure(let error) = results[2] { #expect(error.code == .invalidArgument) } else {
                Issue.record("a notification without devices was committed")
            }
            // One of the two with the same key is committed (SQLite: the first; concurrent stores: either), the
            // other answers its id as a replay.
            let keyedResults = [try results[3].get(), try results[4].get()]
            #expect(keyedResults[0].id == keyedResults[1].id && [keyed.id, again.id].contains(keyedResults[0].id))
            #expect(keyedResults.filter(\.replayed).count == 1)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: unknown.id) == nil)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: good.id)?.deliveries.count == 2)
            #expect(try await store.queueDepth().queued == 4)
            #expect(try await store.enqueueBatch([]).isEmpty)
        }
    }

    /// A batch across apps answers each notification as one at a time would: a key already taken replays even when
    /// the request now names an unknown device, the same key in another app is that app's own, a device id is looked
    /// up in the notification's app, and a job to an unregistered device starts `unregistered`.
    static func enqueueBatchAcrossApps(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let alpha = try await StoreFixtures.register(["a", "b"], in: "alpha", store)
            let beta = try await StoreFixtures.register(["a"], in: "beta", store)
            #expect(try await store.markDeviceUnregistered(
                appID: "alpha", deviceID: "b", reason: "Unregistered", at: StoreFixtures.now))
            let first = try fixtures.notification(appID: "alpha", to: alpha, idempotencyKey: "k")
            let committed = try await store.enqueueBatch([first])
            #expect((try? committed[0].get())?.replayed == false)
            var replay = try fixtures.notification(appID: "alpha", to: alpha, idempotencyKey: "k")
            replay.jobs.append(NewNotification.Job(deviceID: "nobody", body: replay.jobs[0].body))
            let toBeta = try fixtures.notification(appID: "beta", to: beta, idempotencyKey: "k")
            var onlyInAlpha = try fixtures.notification(appID: "beta", to: beta)
            onlyInAlpha.jobs[0].deviceID = "b"
            let results = try await store.enqueueBatch([replay, toBeta, onlyInAlpha])
            let replayed = try results[0].get()
            #expect(replayed.id == first.id && replayed.replayed && replayed.jobCount == 2)
            #expect((try? results[1].get()) == EnqueueResult(id: toBeta.id, replayed: false, jobCount: 1))
            if case .failure(let error) = results[2] {
                #expect(error.code == .unknownDevice && error.field == "devices[0]")
            } else { Issue.record("a notification to a device of another app was committed") }
            let states = try await store.notificationStatus(appID: "alpha", notificationID: first.id)?.deliveries
                .sorted { $0.deviceID < $1.deviceID }.map(\.state)
            #expect(states == [.queued, .unregistered])
            #expect(try await store.notificationStatus(appID: "beta", notificationID: toBeta.id)?.deliveries.count == 1)
            #expect(try await store.notificationStatus(appID: "beta", notificationID: onlyInAlpha.id) == nil)
        }
    }

    /// Two batches holding the same 1,500 idempotency keys in opposite orders, committed at once (two nodes' group
    /// commits): each key is committed once and the other batch replays it; neither batch fails (they do not
    /// deadlock on each other's keys).
    static func enqueueBatchesWithCrossingKeys(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a"], in: "alpha", store)
            for round in 0..<3 {
                let names = (0..<1_500).map { "round\(round)-key\($0)" }
                let forward = try names.map { try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: $0) }
                let backward = try names.reversed().map {
                    try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: $0)
                }
                async let one = store.enqueueBatch(forward)
                async let two = store.enqueueBatch(backward)
                let (first, second) = try await (one, two)
                let answers = try (first + second).map { try $0.get() }
                #expect(answers.filter { !$0.replayed }.count == names.count, "round \(round)")
                for index in names.indices {  // both answers about one key name the same notification
                    #expect(try first[index].get().id == second[names.count - 1 - index].get().id)
                }
            }
            #expect(try await store.queueDepth().queued == 3 * 1_500)
        }
    }

    /// The request digest kept with an idempotency key is answered by a replay and by `idempotentRequest`; a key
    /// without a digest (stored before digests were kept) answers nil; a notification without a key keeps none.
    static func idempotencyRequestDigest(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a"], in: "alpha", store)
            let digest = NewNotification.requestDigest(of: Array(#"{"devices":["a"]}"#.utf8))
            #expect(digest.count == 64)
            var first = try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "order-1")
            first.requestDigest = digest
            let stored = try await store.enqueue(first)
            #expect(!stored.replayed && stored.requestDigest == nil)
            var retry = try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "order-1")
            retry.requestDigest = NewNotification.requestDigest(of: Array(#"{"devices":["b"]}"#.utf8))
            let replay = try await store.enqueue(retry)
            #expect(replay == EnqueueResult(id: first.id, replayed: true, jobCount: 1, requestDigest: digest))
            let found = try await store.idempotentRequest(appID: "alpha", idempotencyKey: "order-1")
            #expect(found?.id == first.id && found?.requestDigest == digest)
            #expect(try await store.idempotentRequest(appID: "alpha", idempotencyKey: "order-2") == nil)
            #expect(try await store.idempotentRequest(appID: "beta", idempotencyKey: "order-1") == nil)
            _ = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "old-key"))
            let old = try await store.idempotentRequest(appID: "alpha", idempotencyKey: "old-key")
            #expect(old != nil && old?.requestDigest == nil)
        }
    }

    static func enqueueValidation(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b"], in: "alpha", store)
            var notification = try fixtures.notification(appID: "alpha", to: keys)
            notification.jobs.append(notification.jobs[0])
            await #expect {
                try await store.enqueue(notification)
            } throws: { ($0 as? GatewayStoreError)?.field == "devices[2]" }
            notification.jobs = []
            await #expect(throws: GatewayStoreError.self) { try await store.enqueue(notification) }
            notification = try fixtures.notification(appID: "alpha", to: keys)
            notification.priority = 7
            await #expect {
                try await store.enqueue(notification)
            } throws: { ($0 as? GatewayStoreError)?.field == "priority" }
            #expect(try await store.queueDepth().total == 0)  // nothing half-written
        }
    }

    // MARK: Claims and leases

    static func concurrentClaimersNeverShareAJob(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let devices = (0..<30).map { "d\($0)" }
            let keys = try await StoreFixtures.register(devices, in: "alpha", store)
            var expected = 0
            for _ in 0..<4 {
                expected += try await store.enqueue(fixtures.notification(appID: "alpha", to: keys)).jobCount
            }
            let nodeB = try await harness.makeStore()
            let nodeC = try await harness.makeStore()
            let workers: [(String, any GatewayStore)] = [("a1", store), ("a2", store), ("b", nodeB), ("c", nodeC)]
            let claims = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for (owner, node) in workers {
                    group.addTask {
                        var mine: [Int64] = []
                        while true {
                            let batch = try await node.claim(owner: owner, limit: 7, leaseDuration: .seconds(60), now: now)
                            if batch.isEmpty { return mine }
                            #expect(batch.allSatisfy { $0.attempts == 1 })
                            mine += batch.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: [[Int64]]()) { $0.append($1) }
            }
            try await nodeB.close()
            try await nodeC.close()
            let all = claims.flatMap { $0 }
            #expect(all.count == expected)
            #expect(Set(all).count == expected)  // nobody got a job twice
            #expect(claims.filter { !$0.isEmpty }.count >= 2)  // the claimers really ran side by side
            #expect(try await store.queueDepth() == QueueDepth(queued: 0, claimed: expected))
        }
    }

    static func expiredLeaseIsTakenOver(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b"], in: "alpha", store)
            let sent = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys))
            let dead = try await store.claim(owner: "dead-node", limit: 10, leaseDuration: .seconds(30), now: now)
            #expect(dead.count == 2)
            #expect(dead[0].leaseExpiresAt == now.addingTimeInterval(30))
            #expect(dead[0].notificationID == sent.id && dead[0].apnsToken == StoreFixtures.token(0))
            #expect(dead[0].environment == .sandbox && dead[0].priority == 10)
            #expect(dead[0].collapseID == sent.id.uuidString.lowercased())
            // While the lease runs nobody else gets the jobs.
            #expect(try await store.claim(owner: "live", limit: 10, leaseDuration: .seconds(30), now: now.addingTimeInterval(29)).isEmpty)
            let taken = try await store.claim(owner: "live", limit: 10, leaseDuration: .seconds(30), now: now.addingTimeInterval(30))
            #expect(Set(taken.map(\.id)) == Set(dead.map(\.id)))
            #expect(taken.allSatisfy { $0.attempts == 2 })
            #expect(taken[0].body == dead[0].body)  // a resend carries the same sealed body
            // The dead node comes back: its lease is gone, nothing changes.
            #expect(try await store.finish(jobID: dead[0].id, owner: "dead-node", outcome: .sent(apnsID: "x"), now: now.addingTimeInterval(31)) == false)
            #expect(try await store.finish(jobID: taken[0].id, owner: "live", outcome: .sent(apnsID: "6f1c2a58-2f4e-4a53-9a0c-1f1f8f0e9a10"), now: now.addingTimeInterval(31)))
            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: sent.id))
            #expect(status.deliveries[0].state == .sent)
            #expect(status.deliveries[0].apnsID == "6f1c2a58-2f4e-4a53-9a0c-1f1f8f0e9a10")
            #expect(status.deliveries[0].attempts == 2)
        }
    }

    /// Claims take jobs whose lease ran out first, then queued jobs in the order they fall due (`not_before`, then
    /// id), and never more than `limit`: the walks the claim makes instead of sorting the whole queue.
    static func claimOrder(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b", "c"], in: "alpha", store)
            let first = try await store.enqueue(fixtures.notification(appID: "alpha", to: ["a": keys["a"]!]))
            let dead = try await store.claim(owner: "dead", limit: 1, leaseDuration: .seconds(30), now: now)
            #expect(dead.map(\.notificationID) == [first.id])
            let second = try await store.enqueue(fixtures.notification(appID: "alpha", to: ["b": keys["b"]!, "c": keys["c"]!]))
            // b is put back to wait 20 s; c stays due.
            let early = try await store.claim(owner: "w", limit: 2, leaseDuration: .seconds(60), now: now.addingTimeInterval(1))
            #expect(early.count == 2 && early.allSatisfy { $0.notificationID == second.id })
            for job in early {
                let outcome: JobOutcome = job.deviceID == "b"
                    ? .retry(reason: "TooManyRequests", notBefore: now.addingTimeInterval(20)) : .retry(reason: "InternalServerError", notBefore: now.addingTimeInterval(2))
                #expect(try await store.finish(jobID: job.id, owner: "w", outcome: outcome, now: now.addingTimeInterval(1)))
            }
            // At 30 s: the lease that ran out (a), then c (due at 2 s), then b (due at 20 s); limit 2 leaves b.
            let taken = try await store.claim(owner: "live", limit: 2, leaseDuration: .seconds(60), now: now.addingTimeInterval(30))
            #expect(taken.map(\.deviceID) == ["a", "c"])
            let rest = try await store.claim(owner: "live", limit: 5, leaseDuration: .seconds(60), now: now.addingTimeInterval(30))
            #expect(rest.map(\.deviceID) == ["b"])
        }
    }

    /// A batch of job ends (the delivery loop's group commit) does what each end does on its own, and reports for
    /// each, in order, whether its owner held the job.
    static func batchFinish(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let devices = ["sent", "failed", "retry", "gone", "other"]
            let keys = try await StoreFixtures.register(devices, in: "alpha", store)
            let sent = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys))
            let jobs = try await store.claim(owner: "w", limit: 5, leaseDuration: .seconds(60), now: now)
            let job = Dictionary(uniqueKeysWithValues: jobs.map { ($0.deviceID, $0) })
            let t = now.addingTimeInterval(1)
            let held = try await store.finish([
                JobFinish(jobID: job["sent"]!.id, owner: "w", outcome: .sent(apnsID: "id-1"), requests: 2, transientReason: "TooManyRequests", now: t),
                JobFinish(jobID: job["failed"]!.id, owner: "w", outcome: .failed(reason: "PayloadTooLarge"), requests: 1, transientReason: nil, now: t),
                JobFinish(jobID: job["retry"]!.id, owner: "w", outcome: .retry(reason: "ServiceUnavailable", notBefore: now.addingTimeInterval(10)), requests: 1, transientReason: "ServiceUnavailable", now: t),
                JobFinish(jobID: job["gone"]!.id, owner: "w", outcome: .unregistered(reason: "Unregistered"), requests: 1, transientReason: nil, now: t),
                JobFinish(jobID: job["other"]!.id, owner: "someone-else", outcome: .sent(apnsID: "id-x"), requests: 1, transientReason: nil, now: t),
            ])
            #expect(held == [true, true, true, true, false])
            #expect(try await store.finish([JobFinish]()) == [])
            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: sent.id))
            let byDevice = Dictionary(uniqueKeysWithValues: status.deliveries.map { ($0.deviceID, $0) })
            #expect(byDevice["sent"]?.state == .sent && byDevice["sent"]?.apnsID == "id-1")
            #expect(byDevice["sent"]?.attempts == 2 && byDevice["sent"]?.lastTransientReason == "TooManyRequests")
            #expect(byDevice["failed"]?.state == .failed && byDevice["failed"]?.reason == "PayloadTooLarge")
            #expect(byDevice["retry"]?.state == .queued && byDevice["retry"]?.reason == "ServiceUnavailable")
            #expect(byDevice["gone"]?.state == .unregistered)
            #expect(byDevice["other"]?.state == .claimed, "a job another owner holds is left alone")
            #expect(try await store.device(appID: "alpha", deviceID: "gone")?.unregisteredAt == t)
        }
    }

    // MARK: Transitions

    static func transitions(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let devices = ["sent", "failed", "retry", "expired", "gone"]
            let keys = try await StoreFixtures.register(devices, in: "alpha", store)
            let sent = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys))
            let later = try await store.enqueue(fixtures.notification(appID: "alpha", to: ["gone": keys["gone"]!]))
            #expect(try await store.queueDepth() == QueueDepth(queued: 6, claimed: 0))
            let jobs = try await store.claim(owner: "w", limit: 5, leaseDuration: .seconds(60), now: now)
            #expect(try await store.queueDepth() == QueueDepth(queued: 1, claimed: 5))
            let job = Dictionary(uniqueKeysWithValues: jobs.map { ($0.deviceID, $0) })
            let t = now.addingTimeInterval(1)
            #expect(try await store.finish(jobID: job["sent"]!.id, owner: "w", outcome: .sent(apnsID: "id-1"), now: t))
            #expect(try await store.finish(jobID: job["failed"]!.id, owner: "w", outcome: .failed(reason: "PayloadTooLarge"), now: t))
            #expect(try await store.finish(jobID: job["retry"]!.id, owner: "w", outcome: .retry(reason: "TooManyRequests", notBefore: now.addingTimeInterval(10)), now: t))
            #expect(try await store.finish(jobID: job["expired"]!.id, owner: "w", outcome: .expired, now: t))
            #expect(try await store.finish(jobID: job["gone"]!.id, owner: "w", outcome: .unregistered(reason: "Unregistered"), now: t))
            // A job that is no longer claimed cannot be finished again.
            #expect(try await store.finish(jobID: job["sent"]!.id, owner: "w", outcome: .failed(reason: "x"), now: t) == false)

            var status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: sent.id))
            let byDevice = Dictionary(uniqueKeysWithValues: status.deliveries.map { ($0.deviceID, $0) })
            #expect(byDevice["sent"]?.state == .sent && byDevice["sent"]?.apnsID == "id-1")
            #expect(byDevice["failed"]?.state == .failed && byDevice["failed"]?.reason == "PayloadTooLarge")
            #expect(byDevice["retry"]?.state == .queued && byDevice["retry"]?.reason == "TooManyRequests")
            #expect(byDevice["expired"]?.state == .expired)
            #expect(byDevice["gone"]?.state == .unregistered && byDevice["gone"]?.reason == "Unregistered")
            #expect(byDevice["gone"]?.updatedAt == t)
            // The unregistered outcome marked the device and ended its other waiting job.
            #expect(try await store.device(appID: "alpha", deviceID: "gone")?.unregisteredAt == t)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: later.id)?.deliveries[0].state == .unregistered)
            #expect(try await store.queueDepth() == QueueDepth(queued: 1, claimed: 0))

            // The retry waits for its time, then comes back with its attempt counted.
            #expect(try await store.claim(owner: "w", limit: 5, leaseDuration: .seconds(60), now: now.addingTimeInterval(9)).isEmpty)
            let again = try await store.claim(owner: "w", limit: 5, leaseDuration: .seconds(60), now: now.addingTimeInterval(10))
            #expect(again.map(\.deviceID) == ["retry"] && again[0].attempts == 2)

            // A new notification to the unregistered device starts unregistered and is never claimed.
            let toGone = try await store.enqueue(fixtures.notification(appID: "alpha", to: ["gone": keys["gone"]!]))
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: toGone.id)?.deliveries[0].state == .unregistered)
            // Registering again clears the mark.
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "gone", apnsToken: StoreFixtures.token(42), environment: .sandbox,
                registration: StoreFixtures.registration().1, now: now.addingTimeInterval(20))
            #expect(try await store.device(appID: "alpha", deviceID: "gone")?.unregisteredAt == nil)
            status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: sent.id))
            #expect(status.deliveries.count == 5)
        }
    }

    static func unregisteredAfterTokenChangeKeepsDevice(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["phone"], in: "alpha", store)
            _ = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys))
            let job = try #require(try await store.claim(owner: "w", limit: 1, leaseDuration: .seconds(60), now: now).first)
            // The app registers a new token while the old one is being refused by APNs.
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "phone", apnsToken: StoreFixtures.token(7), environment: .sandbox,
                registration: StoreFixtures.registration().1, now: now.addingTimeInterval(1))
            #expect(try await store.finish(jobID: job.id, owner: "w", outcome: .unregistered(reason: "BadDeviceToken"), now: now.addingTimeInterval(2)))
            #expect(try await store.device(appID: "alpha", deviceID: "phone")?.unregisteredAt == nil)
        }
    }

    static func markUnregisteredAndExpiry(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b", "c"], in: "alpha", store)
            let short = try await store.enqueue(fixtures.notification(appID: "alpha", to: ["a": keys["a"]!, "b": keys["b"]!], ttl: 60))
            let long = try await store.enqueue(fixtures.notification(appID: "alpha", to: ["c": keys["c"]!], ttl: 3600))
            #expect(try await store.markDeviceUnregistered(appID: "alpha", deviceID: "b", reason: "Unregistered", at: now))
            #expect(try await store.device(appID: "alpha", deviceID: "b")?.unregisteredAt == now)
            // "a" is claimed and its lease runs out after the notification expired.
            #expect(try await store.claim(owner: "w", limit: 1, leaseDuration: .seconds(90), now: now).map(\.deviceID) == ["a"])
            // Past expiry nothing of the short notification is handed out.
            #expect(try await store.claim(owner: "w", limit: 10, leaseDuration: .seconds(30), now: now.addingTimeInterval(60)).map(\.deviceID) == ["c"])
            #expect(try await store.expireOverdue(now: now.addingTimeInterval(60)).isEmpty)  // a's lease still runs
            #expect(try await store.expireOverdue(now: now.addingTimeInterval(90)) == [.apns: 1])
            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: short.id))
            #expect(status.deliveries.map(\.state) == [.expired, .unregistered])
            #expect(status.expiresAt == now.addingTimeInterval(60))
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: long.id)?.deliveries[0].state == .claimed)
        }
    }

    /// Retention: notifications expired before the cutoff go, oldest first and at most `limit` per call, with their
    /// jobs (sealed bodies) and idempotency keys; the others stay untouched.
    static func purgeExpiredKeepsTheRest(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b"], in: "alpha", store)
            let shortNotification = try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "k-short", ttl: 60)
            let short = try await store.enqueue(shortNotification)
            let middle = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys, ttl: 3600))
            let long = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys, ttl: 7200))
            #expect(try await store.queueDepth().queued == 6)

            #expect(try await store.purgeExpired(before: now.addingTimeInterval(60), limit: 100) == 0)  // not before
            #expect(try await store.purgeExpired(before: now.addingTimeInterval(61), limit: 100) == 1)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: short.id) == nil)
            #expect(try await store.notificationID(appID: "alpha", idempotencyKey: "k-short") == nil)
            #expect(try await store.queueDepth().queued == 4)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: middle.id)?.deliveries.count == 2)
            // Nothing of it stays behind: not its jobs' sealed bodies, not their message ids (a receipt finds a job
            // by them; PostgreSQL deletes both explicitly since migration 11). Only PostgreSQL's rows can be searched
            // this way: a SQLite file keeps deleted rows' bytes in free pages and its WAL.
            let rows = harness is PostgresHarness ? try await harness.rawContents() : []
            for job in shortNotification.jobs {
                let messageID = try #require(job.messageID)
                #expect(!rows.contains { $0.bytes.contains(bytes: Array(messageID.utf8)) }, "message id \(messageID) kept")
                let body = Hex.encode(job.body.bytes)
                #expect(!rows.contains { $0.bytes.contains(bytes: Array(body.utf8)) }, "a purged job's body kept")
            }

            // Oldest first, bounded per call.
            #expect(try await store.purgeExpired(before: now.addingTimeInterval(10_000), limit: 1) == 1)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: middle.id) == nil)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: long.id) != nil)
            #expect(try await store.purgeExpired(before: now.addingTimeInterval(10_000), limit: 1) == 1)
            #expect(try await store.purgeExpired(before: now.addingTimeInterval(10_000), limit: 1) == 0)
            #expect(try await store.queueDepth() == QueueDepth(queued: 0, claimed: 0))
            // The key is free again: a new request with it is a new notification.
            let again = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "k-short"))
            #expect(!again.replayed && again.id != short.id)
        }
    }

    // MARK: Plaintext never reaches the database

    static func plaintextNeverStored(_ harness: any StoreHarness) async throws {
        let marker = "PLAINTEXT-MARKER-" + UUID().uuidString
        let visible = "visible-device-" + UUID().uuidString  // not secret: proves the scan sees what was written
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register([visible, "other"], in: "alpha", store)
            var content = NotificationContent(title: marker, body: "Your code is \(marker)")
            content.data = .object(["secret": .string(marker)])
            let first = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys, content: content, idempotencyKey: "k"))
            _ = try await store.enqueue(fixtures.notification(appID: "alpha", to: keys, content: content, idempotencyKey: "k"))
            let claimed = try await store.claim(owner: "w", limit: 10, leaseDuration: .seconds(30), now: now)
            for job in claimed {
                _ = try await store.finish(jobID: job.id, owner: "w", outcome: .retry(reason: "InternalServerError", notBefore: now), now: now)
            }
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: first.id)?.deliveries.count == 2)
            // Content in clear cannot be handed to the store as a body at all.
            let clear = try JSONSerialization.data(withJSONObject: ["title": marker])
            #expect(throws: GatewayStoreError.self) { try SealedBody(apnsBody: [UInt8](clear)) }
            #expect(throws: GatewayStoreError.self) {
                try SealedBody(apnsBody: Array(#"{"aps":{"alert":{"body":"\#(marker)"}}}"#.utf8))
            }

            let contents = try await harness.rawContents()
            #expect(!contents.isEmpty)
            let written = contents.flatMap(\.bytes)
            let sawVisible = written.contains(bytes: Array(visible.utf8))
            #expect(sawVisible, "the scan did not see the device id it wrote")
            let hexMarker = Array(marker.utf8).map { String(format: "%02x", $0) }.joined()
            for (name, bytes) in contents {
                let plain = bytes.contains(bytes: Array(marker.utf8))
                let hex = bytes.contains(bytes: Array(hexMarker.utf8))
                #expect(!plain, "plaintext marker found in \(name) (\(bytes.count) bytes scanned)")
                #expect(!hex, "plaintext marker (hex) found in \(name) (\(bytes.count) bytes scanned)")
            }
        }
    }
}
