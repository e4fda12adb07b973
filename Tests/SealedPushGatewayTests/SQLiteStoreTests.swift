import Foundation
import GRDB
@testable import SealedPushGateway
import Testing

/// The store contract on SQLite: a real database file (and its WAL) in a temporary directory.
@Suite("Gateway store on SQLite", .serialized)  // one test at a time: the CPU is shared with the rest of the run
struct SQLiteStoreTests {
    @Test func migrationsFromEmptyAndRerun() async throws { try await StoreContract.migrationsFromEmptyAndRerun(SQLiteHarness()) }
    @Test func lastArrivedRegistrationWins() async throws { try await StoreContract.lastArrivedRegistrationWins(SQLiteHarness()) }
    @Test func removeDevice() async throws { try await StoreContract.removeDevice(SQLiteHarness()) }
    @Test func apiKeys() async throws { try await StoreContract.apiKeys(SQLiteHarness()) }
    @Test func apiKeyExpiryListAndLastUse() async throws { try await StoreContract.apiKeyExpiryListAndLastUse(SQLiteHarness()) }
    @Test func removeAppAndPreviousIdentities() async throws { try await StoreContract.removeAppAndPreviousIdentities(SQLiteHarness()) }
    @Test func appsAreIsolated() async throws { try await StoreContract.appsAreIsolated(SQLiteHarness()) }
    @Test func usersDevices() async throws { try await StoreContract.usersDevices(SQLiteHarness()) }
    @Test func removeUserDevices() async throws { try await StoreContract.removeUserDevices(SQLiteHarness()) }
    @Test func idempotency() async throws { try await StoreContract.idempotency(SQLiteHarness()) }
    @Test func enqueueBatch() async throws { try await StoreContract.enqueueBatch(SQLiteHarness()) }
    @Test func enqueueBatchAcrossApps() async throws { try await StoreContract.enqueueBatchAcrossApps(SQLiteHarness()) }
    @Test func enqueueBatchesWithCrossingKeys() async throws { try await StoreContract.enqueueBatchesWithCrossingKeys(SQLiteHarness()) }
    @Test func idempotencyRequestDigest() async throws { try await StoreContract.idempotencyRequestDigest(SQLiteHarness()) }
    @Test func enqueueValidation() async throws { try await StoreContract.enqueueValidation(SQLiteHarness()) }
    @Test func claimOrder() async throws { try await StoreContract.claimOrder(SQLiteHarness()) }
    @Test func batchFinish() async throws { try await StoreContract.batchFinish(SQLiteHarness()) }
    @Test func concurrentClaimersNeverShareAJob() async throws { try await StoreContract.concurrentClaimersNeverShareAJob(SQLiteHarness()) }
    @Test func expiredLeaseIsTakenOver() async throws { try await StoreContract.expiredLeaseIsTakenOver(SQLiteHarness()) }
    @Test func transitions() async throws { try await StoreContract.transitions(SQLiteHarness()) }
    @Test func unregisteredAfterTokenChangeKeepsDevice() async throws { try await StoreContract.unregisteredAfterTokenChangeKeepsDevice(SQLiteHarness()) }
    @Test func markUnregisteredAndExpiry() async throws { try await StoreContract.markUnregisteredAndExpiry(SQLiteHarness()) }
    @Test func purgeExpiredKeepsTheRest() async throws { try await StoreContract.purgeExpiredKeepsTheRest(SQLiteHarness()) }
    @Test func plaintextNeverStored() async throws { try await StoreContract.plaintextNeverStored(SQLiteHarness()) }
    @Test func nodesAndQueueSummary() async throws { try await NodeAndTokenContract.nodesAndQueueSummary(SQLiteHarness()) }
    @Test func restartTakesBackItsLeases() async throws { try await NodeAndTokenContract.restartTakesBackItsLeases(SQLiteHarness()) }
    @Test func requestsAndTransientReason() async throws { try await NodeAndTokenContract.requestsAndTransientReason(SQLiteHarness()) }
    @Test func tokenBelongsToOneDevice() async throws { try await NodeAndTokenContract.tokenBelongsToOneDevice(SQLiteHarness()) }
    @Test func enqueueUnderLease() async throws { try await NodeAndTokenContract.enqueueUnderLease(SQLiteHarness()) }
    @Test func enqueueChecksTheRegistrationSealedTo() async throws { try await NodeAndTokenContract.enqueueChecksTheRegistrationSealedTo(SQLiteHarness()) }
    @Test func fcmBodiesMustBeSealed() throws { try PlatformContract.fcmBodiesMustBeSealed() }
    @Test func appsKeepFCMCredentials() async throws { try await PlatformContract.appsKeepFCMCredentials(SQLiteHarness()) }
    @Test func devicesOnBothPlatforms() async throws { try await PlatformContract.devicesOnBothPlatforms(SQLiteHarness()) }
    @Test func expiryCountsByPlatform() async throws { try await PlatformContract.expiryCountsByPlatform(SQLiteHarness()) }
    @Test func withdrawRacingDelivery() async throws { try await LifecycleContract.withdrawRacingDelivery(SQLiteHarness()) }
    @Test func receiptsRecordedOnce() async throws { try await LifecycleContract.receiptsRecordedOnce(SQLiteHarness()) }
    @Test func skippedDevicesKeptWithTheNotification() async throws { try await SkippedDevicesContract.keptWithTheNotification(SQLiteHarness()) }

    /// The database is in WAL mode (its `-wal` file is what the plaintext scan reads besides the main file).
    @Test func walMode() async throws {
        let harness = try SQLiteHarness()
        let store = try SQLiteGatewayStore(path: harness.path)
        _ = try await store.migrate()
        #expect(FileManager.default.fileExists(atPath: harness.path + "-wal"))
        try await store.close()
        try await harness.tearDown()
    }

    /// A device's open jobs (ended when it is unregistered or removed) are found through `jobs_device`, which since
    /// migration 12 keeps only open jobs: SQLite reads a partial index only for a statement that states its condition.
    @Test func aDevicesOpenJobsAreFoundThroughTheirIndex() async throws {
        let harness = try SQLiteHarness()
        try await withMigratedStore(harness) { migrated, _ in
            let store = try #require(migrated as? SQLiteGatewayStore)
            let plan = try await store.read("explaining a device's open jobs") { db in
                try Row.fetchAll(
                    db, sql: "EXPLAIN QUERY PLAN " + SQLiteGatewayStore.endOpenJobsSQL,
                    arguments: ["DeviceUnregistered", 0, "alpha", "device-1"]
                ).map { $0["detail"] as String }
            }
            #expect(plan == ["SEARCH jobs USING INDEX jobs_device (app_id=? AND device_id=?)"], "\(plan)")
        }
    }

    /// A node's leases (read at start and taken back from its earlier process) are found through `jobs_app_due`,
    /// which since migration 13 keeps only open jobs: without the index's condition stated, both statements scanned
    /// every job kept.
    @Test func aNodesLeasesAreFoundThroughTheOpenJobsIndex() async throws {
        let harness = try SQLiteHarness()
        try await withMigratedStore(harness) { migrated, _ in
            let store = try #require(migrated as? SQLiteGatewayStore)
            let statements: [(sql: String, arguments: StatementArguments)] = [
                (SQLiteGatewayStore.takeBackLeasesSQL, StatementArguments([0, "n/boot", "n", "n/", "n/"])),
                (SQLiteGatewayStore.leasedJobsSQL, StatementArguments(["n", "n/", "n/"])),
            ]
            for statement in statements {
                let plan: [String] = try await store.read("explaining a node's leases") { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                        .map { row -> String in row["detail"] }
                }
                #expect(plan.first == "SEARCH jobs USING INDEX jobs_app_due (state=?)", "\(plan)")
            }
        }
    }
}
