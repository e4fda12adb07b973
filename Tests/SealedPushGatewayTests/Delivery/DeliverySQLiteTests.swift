import Testing

/// The delivery workers on SQLite (a real database file) against the APNs emulator on loopback.
@Suite("Delivery on SQLite", .serialized)  // one at a time: each is load on 2 shared cores
struct DeliverySQLiteTests {
    @Test func deliversEachJobOnce() async throws { try await DeliveryContract.deliversEachJobOnce(SQLiteHarness()) }
    @Test func unregisteredTokensStopSends() async throws { try await DeliveryContract.unregisteredTokensStopSends(SQLiteHarness()) }
    @Test func expiredJobsAreNotSent() async throws { try await DeliveryContract.expiredJobsAreNotSent(SQLiteHarness()) }
    @Test func retentionPurgesOldNotifications() async throws { try await DeliveryContract.retentionPurgesOldNotifications(SQLiteHarness()) }
    @Test func lapsedLeaseIsTakenOver() async throws { try await DeliveryContract.lapsedLeaseIsTakenOver(SQLiteHarness()) }
    @Test func resendAfterCrashIsIdentical() async throws { try await DeliveryContract.resendAfterCrashIsIdentical(SQLiteHarness()) }
    @Test func faultsLoseNothing() async throws { try await DeliveryContract.faultsLoseNothing(SQLiteHarness()) }
    @Test func permanentFailureKeepsAPNsReason() async throws { try await DeliveryContract.permanentFailureKeepsAPNsReason(SQLiteHarness()) }
    @Test func exhaustedRetriesFail() async throws { try await DeliveryContract.exhaustedRetriesFail(SQLiteHarness()) }
    @Test func shutdownAbandonsHungSendsToLeaseExpiry() async throws { try await DeliveryContract.shutdownAbandonsHungSendsToLeaseExpiry(SQLiteHarness()) }
    @Test func twoNodesDeliverEachJobOnce() async throws { try await DeliveryContract.twoNodesDeliverEachJobOnce(SQLiteHarness()) }
    @Test func gracefulShutdownFinishesInFlight() async throws { try await DeliveryContract.gracefulShutdownFinishesInFlight(SQLiteHarness()) }
    @Test func restartTakesBackDeadIncarnationsLeases() async throws { try await NodeAndRetryDeliveryContract.restartTakesBackDeadIncarnationsLeases(SQLiteHarness()) }
    @Test func liveNodeIDIsRefused() async throws { try await NodeAndRetryDeliveryContract.liveNodeIDIsRefused(SQLiteHarness()) }
    @Test func everyAPNsRequestIsCounted() async throws { try await NodeAndRetryDeliveryContract.everyAPNsRequestIsCounted(SQLiteHarness()) }
    @Test func apnsKeyChangeTakesEffectWithoutRestart() async throws { try await CredentialReloadDeliveryContract.apnsKeyChangeTakesEffectWithoutRestart(SQLiteHarness()) }
    @Test func floodingAppDoesNotDelayAnother() async throws { try await FairnessDeliveryContract.floodingAppDoesNotDelayAnother(SQLiteHarness()) }
    @Test func iPhoneAndAndroidEachGetOne() async throws { try await PlatformDeliveryContract.iPhoneAndAndroidEachGetOne(SQLiteHarness()) }
    @Test func bothPlatformsGoThroughTheProxy() async throws { try await PlatformDeliveryContract.bothPlatformsGoThroughTheProxy(SQLiteHarness()) }
    @Test func fcmFaultsLoseNothing() async throws { try await PlatformDeliveryContract.fcmFaultsLoseNothing(SQLiteHarness()) }
    @Test func unregisteredAndroidStopsSends() async throws { try await PlatformDeliveryContract.unregisteredAndroidStopsSends(SQLiteHarness()) }
}
