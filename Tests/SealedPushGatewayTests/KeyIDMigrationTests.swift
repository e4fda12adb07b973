import Foundation
import SealedPushCore
@testable import SealedPushGateway
import Testing

/// The migration that lower-cases device key ids (SQLite's 15, PostgreSQL's 16). Gateways before registration refused
/// an upper-case `keyId` stored it as sent; a receipt looks its device, and its job, up by the key id it was sealed
/// with, in lowercase hex, as exact text — so receipts from such a device were refused until it registered again.
/// A database built at the version before, holding such rows, is opened by today's store: the device is found by its
/// key id and its receipts are recorded. Before the migration existed, `migrate()` left the rows as they were and
/// the lookup found nothing.
@Suite("Store migration: device key ids in lowercase", .serialized)
struct KeyIDMigrationTests {
    static let now = StoreFixtures.now

    @Test func sqlite() async throws {
        let harness = try SQLiteHarness()
        let store = try SQLiteGatewayStore(path: harness.path)
        try await Self.upperCaseKeyIDsAreLowerCased(
            harness, store, previous: 14, blob: "x'00'"
        ) { try await store.migrate(upTo: $0) }
    }

    @Test(
        .enabled(
            if: PostgresHarness.serverURL != nil,
            "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
    func postgres() async throws {
        let harness = try await PostgresHarness()
        let store = try PostgresGatewayStore(url: harness.url)
        try await Self.upperCaseKeyIDsAreLowerCased(
            harness, store, previous: 15, blob: "'\\x00'"
        ) { try await store.migrate(upTo: $0) }
    }

    /// The scenario on one store.
    /// - Parameters:
    ///   - harness: The test's database.
    ///   - store: A store on it, not yet migrated.
    ///   - previous: The schema version before the migration.
    ///   - blob: A one-byte blob literal in the database's SQL.
    ///   - migrateUpTo: The store's `migrate(upTo:)`.
    static func upperCaseKeyIDsAreLowerCased(
        _ harness: any StoreHarness, _ store: any GatewayStore, previous: Int, blob: String,
        migrateUpTo: (Int) async throws -> Int
    ) async throws {
        do {
            #expect(try await migrateUpTo(previous) == previous)
            try await store.putApp(StoreFixtures.app("alpha"), now: now)
            try await store.putApp(StoreFixtures.app("beta"), now: now)
            // "old" registered through a gateway that kept its key id as sent, in upper case; "other" has a key of
            // its own, in lowercase.
            let (oldKey, oldRegistration) = try StoreFixtures.registration()
            let lower = oldRegistration.keyId
            let upper = lower.uppercased()
            #expect(upper != lower)  // the key id has letters, else the test proves nothing
            let (otherKey, otherRegistration) = try StoreFixtures.registration()
            // In beta, "twin" and "twin-upper" hold one key, in either spelling: lower-casing makes their key ids
            // equal (no unique index holds a key id, and both rows name the same public key).
            let devices = [
                ("alpha", "old", oldRegistration), ("alpha", "other", otherRegistration),
                ("beta", "twin", oldRegistration), ("beta", "twin-upper", oldRegistration),
            ]
            for (index, (appID, deviceID, registration)) in devices.enumerated() {
                _ = try await store.putDevice(
                    appID: appID, deviceID: deviceID, apnsToken: StoreFixtures.token(index), environment: .sandbox,
                    registration: registration, now: now)
            }
            try await harness.execute("UPDATE devices SET key_id = '\(upper)' WHERE device_id IN ('old', 'twin-upper')")
            // What the receipt path found before the migration: nothing.
            #expect(try await store.device(appID: "alpha", keyID: lower) == nil)
            // A job of "old" whose message id a gateway kept with the key id in upper case (the gateway always wrote
            // these in lowercase; the migration lower-cases any that is not).
            let oldNotification = UUID()
            let oldMessage = String(repeating: "ab", count: 16)
            let notificationText = oldNotification.uuidString.lowercased()
            try await harness.execute(
                "INSERT INTO notifications (id, app_id, priority, created_at, expires_at) "
                    + "VALUES ('\(notificationText)', 'alpha', 10, \(Millis.from(now)), \(Millis.from(now) + 86_400_000))")
            try await harness.execute(
                "INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before, updated_at) "
                    + "VALUES ('\(notificationText)', 'alpha', 'old', \(blob), 'sent', 0, 0)")
            try await harness.execute(
                "INSERT INTO job_messages (job_id, app_id, message_id, key_id) "
                    + "SELECT id, 'alpha', '\(oldMessage)', '\(upper)' FROM jobs WHERE device_id = 'old'")

            // Today's store opens it: the migration runs first.
            #expect(try await migrateUpTo(previous + 1) == 1)
            #expect(try await store.schemaVersion() == previous + 1)
            #expect(try await store.device(appID: "alpha", deviceID: "old")?.registration == oldRegistration)
            #expect(try await store.device(appID: "alpha", deviceID: "other")?.registration == otherRegistration)
            // The receipt path's lookup finds the device by its key id.
            #expect(try await store.device(appID: "alpha", keyID: lower)?.deviceID == "old")
            // Both of beta's devices are kept, registered, with the key in lowercase; the lookup finds one of them.
            for deviceID in ["twin", "twin-upper"] {
                let device = try #require(try await store.device(appID: "beta", deviceID: deviceID))
                #expect(device.registration == oldRegistration && device.unregisteredAt == nil)
            }
            let twin = try #require(try await store.device(appID: "beta", keyID: lower), "no device for its key id")
            #expect(["twin", "twin-upper"].contains(twin.deviceID))

            // A receipt about the job sent before the migration is recorded.
            func receipt(_ id: Character, key: String, message: String) -> ReceivedReceipt {
                ReceivedReceipt(
                    appID: "alpha", keyID: key, receiptID: String(repeating: id, count: 32),
                    receiptExpiresAt: now.addingTimeInterval(604_800), messageID: message, outcome: "decrypted",
                    reason: nil, attachmentsDelivered: 0, attachmentsFailed: 0, deviceTime: now, receivedAt: now)
            }
            #expect(
                try await store.recordReceipt(receipt("1", key: lower, message: oldMessage))
                    == .recorded(notificationID: oldNotification, deviceID: "old", first: true))

            // A send sealed to its key (in lowercase, as the sealer names it) is taken, and so is its receipt.
            let fixtures = try StoreFixtures()
            let sent = try fixtures.notification(appID: "alpha", to: ["old": oldKey, "other": otherKey])
            let result = try await store.enqueue(sent)
            #expect(!result.replayed && result.jobCount == 2)
            let job = try #require(sent.jobs.first { $0.deviceID == "old" })
            #expect(job.keyID == lower)
            #expect(
                try await store.recordReceipt(receipt("2", key: lower, message: try #require(job.messageID)))
                    == .recorded(notificationID: sent.id, deviceID: "old", first: true))
            // An upper-case key id registered today is kept in lowercase too.
            var again = oldRegistration
            again.keyId = upper
            _ = try await store.putDevice(
                appID: "alpha", deviceID: "old", apnsToken: StoreFixtures.token(0), environment: .sandbox,
                registration: again, now: now.addingTimeInterval(60))
            #expect(try await store.device(appID: "alpha", deviceID: "old")?.registration.keyId == lower)
        } catch {
            try? await store.close()
            try? await harness.tearDown()
            throw error
        }
        try await store.close()
        try await harness.tearDown()
    }
}
