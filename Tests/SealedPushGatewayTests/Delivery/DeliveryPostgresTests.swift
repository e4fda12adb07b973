import Testing

/// The delivery workers on PostgreSQL (`SEALEDPUSH_TEST_POSTGRES_URL`; skipped, never passed, without it).
@Suite(
    "Delivery on PostgreSQL", .serialized,
    .enabled(
        if: PostgresHarness.serverURL != nil,
        "SEALEDPUSH_TEST_POSTGRES_URL is not set: run `eval \"$(bash scripts/postgres-test.sh start)\"` first"))
struct DeliveryPostgresTests {
    @Test func deliversEachJobOnce() async throws { try await DeliveryContract.deliversEachJobOnce(PostgresHarness()) }
    @Test func unregisteredTokensStopSends() async throws { try await DeliveryContract.unregisteredTokensStopSends(PostgresHarness()) }
    @Test func expiredJobsAreNotSent() async throws { try await DeliveryContract.expiredJobsAreNotSent(PostgresHarness()) }
    @Test func retentionPurgesOldNotifications() async throws { try await DeliveryContract.retentionPurgesOldNotifications(PostgresHarness()) }
    @Test func lapsedLeaseIsTakenOver() async throws { try await DeliveryContract.lapsedLeaseIsTakenOver(PostgresHarness()) }
    @Test func resendAfterCrashIsIdentical() async throws { try await DeliveryContract.resendAfterCrashIsIdentical(PostgresHarness()) }
    @Test func faultsLoseNothing() async throws { try await DeliveryContract.faultsLoseNothing(PostgresHarness()) }
    @Test func permanentFailureKeepsAPNsReason() async throws { try await DeliveryContract.permanentFailureKeepsAPNsReason(PostgresHarness()) }
    @Test func exhaustedRetriesFail() async throws { try await DeliveryContract.exhaustedRetriesFail(PostgresHarness()) }
    @Test func shutdownAbandonsHungSendsToLeaseExpiry() async throws { try await DeliveryContract.shutdownAbandonsHungSendsToLeaseExpiry(PostgresHarness()) }
    @Test func twoNodesDeliverEachJobOnce() async throws { try await DeliveryContract.twoNodesDeliverEachJobOnce(PostgresHarness()) }
    @Test func gracefulShutdownFinishesInFlight() async throws { try await DeliveryContract.gracefulShutdownFinishesInFlight(PostgresHarness()) }
    @Test func restartTakesBackDeadIncarnationsLeases() async throws { try await NodeAndRetryDeliveryContract.restartTakesBackDeadIncarnationsLeases(PostgresHarness()) }
    @Test func liveNodeIDIsRefused() async throws { try await NodeAndRetryDeliveryContract.liveNodeIDIsRefused(PostgresHarness()) }
    @Test func everyAPNsRequestIsCounted() async throws { try await NodeAndRetryDeliveryContract.everyAPNsRequestIsCounted(PostgresHarness()) }
    @Test func apnsKeyChangeTakesEffectWithoutRestart() async throws { try await CredentialReloadDeliveryContract.apnsKeyChangeTakesEffectWithoutRestart(PostgresHarness()) }
    @Test func floodingAppDoesNotDelayAnother() async throws { try await FairnessDeliveryContract.floodingAppDoesNotDelayAnother(PostgresHarness()) }
    @Test func iPhoneAndAndroidEachGetOne() async throws { try await PlatformDeliveryContract.iPhoneAndAndroidEachGetOne(PostgresHarness()) }
    @Test func fcmFaultsLoseNothing() async throws { try await PlatformDeliveryContract.fcmFaultsLoseNothing(PostgresHarness()) }
    @Test func unregisteredAndroidStopsSends() async throws { try await PlatformDeliveryContract.unregisteredAndroidStopsSends(PostgresHarness()) }
}
