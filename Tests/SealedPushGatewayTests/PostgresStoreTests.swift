import SealedPushGateway
import Testing

/// The store contract on PostgreSQL: a real server on loopback, one new database per test.
///
/// Runs only when `SEALEDPUSH_TEST_POSTGRES_URL` names a server (`eval "$(bash scripts/postgres-test.sh start)"`;
/// `scripts/test` and CI always set it). Without it the suite is reported as skipped, never as passed.
@Suite(
    "Gateway store on PostgreSQL",
    .serialized,  // one test (one new database, a few connections) at a time
    .enabled(
        if: PostgresHarness.serverURL != nil,
        "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
struct PostgresStoreTests {
    @Test func migrationsFromEmptyAndRerun() async throws { try await StoreContract.migrationsFromEmptyAndRerun(PostgresHarness()) }
    @Test func lastArrivedRegistrationWins() async throws { try await StoreContract.lastArrivedRegistrationWins(PostgresHarness()) }
    @Test func removeDevice() async throws { try await StoreContract.removeDevice(PostgresHarness()) }
    @Test func apiKeys() async throws { try await StoreContract.apiKeys(PostgresHarness()) }
    @Test func apiKeyExpiryListAndLastUse() async throws { try await StoreContract.apiKeyExpiryListAndLastUse(PostgresHarness()) }
    @Test func removeAppAndPreviousIdentities() async throws { try await StoreContract.removeAppAndPreviousIdentities(PostgresHarness()) }
    @Test func appsAreIsolated() async throws { try await StoreContract.appsAreIsolated(PostgresHarness()) }
    @Test func usersDevices() async throws { try await StoreContract.usersDevices(PostgresHarness()) }
    @Test func removeUserDevices() async throws { try await StoreContract.removeUserDevices(PostgresHarness()) }
    @Test func idempotency() async throws { try await StoreContract.idempotency(PostgresHarness()) }
    @Test func enqueueBatch() async throws { try await StoreContract.enqueueBatch(PostgresHarness()) }
    @Test func enqueueBatchAcrossApps() async throws { try await StoreContract.enqueueBatchAcrossApps(PostgresHarness()) }
    @Test func enqueueBatchesWithCrossingKeys() async throws { try await StoreContract.enqueueBatchesWithCrossingKeys(PostgresHarness()) }
    @Test func idempotencyRequestDigest() async throws { try await StoreContract.idempotencyRequestDigest(PostgresHarness()) }
    @Test func enqueueValidation() async throws { try await StoreContract.enqueueValidation(PostgresHarness()) }
    @Test func claimOrder() async throws { try await StoreContract.claimOrder(PostgresHarness()) }
    @Test func batchFinish() async throws { try await StoreContract.batchFinish(PostgresHarness()) }
    @Test func concurrentClaimersNeverShareAJob() async throws { try await StoreContract.concurrentClaimersNeverShareAJob(PostgresHarness()) }
    @Test func expiredLeaseIsTakenOver() async throws { try await StoreContract.expiredLeaseIsTakenOver(PostgresHarness()) }
    @Test func transitions() async throws { try await StoreContract.transitions(PostgresHarness()) }
    @Test func unregisteredAfterTokenChangeKeepsDevice() async throws { try await StoreContract.unregisteredAfterTokenChangeKeepsDevice(PostgresHarness()) }
    @Test func markUnregisteredAndExpiry() async throws { try await StoreContract.markUnregisteredAndExpiry(PostgresHarness()) }
    @Test func purgeExpiredKeepsTheRest() async throws { try await StoreContract.purgeExpiredKeepsTheRest(PostgresHarness()) }
    @Test func plaintextNeverStored() async throws { try await StoreContract.plaintextNeverStored(PostgresHarness()) }
    @Test func nodesAndQueueSummary() async throws { try await NodeAndTokenContract.nodesAndQueueSummary(PostgresHarness()) }
    @Test func restartTakesBackItsLeases() async throws { try await NodeAndTokenContract.restartTakesBackItsLeases(PostgresHarness()) }
    @Test func requestsAndTransientReason() async throws { try await NodeAndTokenContract.requestsAndTransientReason(PostgresHarness()) }
    @Test func tokenBelongsToOneDevice() async throws { try await NodeAndTokenContract.tokenBelongsToOneDevice(PostgresHarness()) }
    @Test func enqueueUnderLease() async throws { try await NodeAndTokenContract.enqueueUnderLease(PostgresHarness()) }
    @Test func enqueueChecksTheRegistrationSealedTo() async throws { try await NodeAndTokenContract.enqueueChecksTheRegistrationSealedTo(PostgresHarness()) }
    @Test func appsKeepFCMCredentials() async throws { try await PlatformContract.appsKeepFCMCredentials(PostgresHarness()) }
    @Test func devicesOnBothPlatforms() async throws { try await PlatformContract.devicesOnBothPlatforms(PostgresHarness()) }
    @Test func expiryCountsByPlatform() async throws { try await PlatformContract.expiryCountsByPlatform(PostgresHarness()) }
    @Test func withdrawRacingDelivery() async throws { try await LifecycleContract.withdrawRacingDelivery(PostgresHarness()) }
    @Test func receiptsRecordedOnce() async throws { try await LifecycleContract.receiptsRecordedOnce(PostgresHarness()) }
    @Test func skippedDevicesKeptWithTheNotification() async throws { try await SkippedDevicesContract.keptWithTheNotification(PostgresHarness()) }
}
