import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushGateway

/// A store that registers a device again, with a fresh key, just before a send's jobs for it are committed — as
/// another node sharing the database would between the send's sealing and its commit — and passes everything to
/// `inner`.
struct RegisteringAgainStore: GatewayStore {
    /// Which device is registered again, and how many more times.
    final class Target: Sendable {
        private let state = Locked<(deviceID: String, times: Int)>(("", 0))

        func set(deviceID: String, times: Int) { state.withLock { $0 = (deviceID, times) } }

        /// Whether `deviceID` is to be registered again now (counted).
        func take(_ deviceID: String) -> Bool {
            state.withLock { state in
                guard state.deviceID == deviceID, state.times > 0 else { return false }
                state.times -= 1
                return true
            }
        }
    }

    let inner: any GatewayStore
    let target: Target

    private func registerAgain(appID: String, deviceID: String) async throws {
        guard let device = try await inner.device(appID: appID, deviceID: deviceID) else { return }
        let ring = DeviceKeyRing.generate(now: UInt64(Date().timeIntervalSince1970))
        _ = try await inner.putDevice(
            appID: appID, deviceID: deviceID, address: device.address, registration: ring.registration(),
            userID: device.userID, now: Date())
    }

    var writeProblem: String? { inner.writeProblem }

    func ping() async throws { try await inner.ping() }

    func migrate() async throws -> Int { try await inner.migrate() }
    func schemaVersion() async throws -> Int { try await inner.schemaVersion() }
    func close() async throws { try await inner.close() }
    func putApp(_ app: GatewayApp, now: Date) async throws { try await inner.putApp(app, now: now) }
    func app(id: String) async throws -> GatewayApp? {
        return try await inner.app(id: id)
    }
    func apps() async throws -> [GatewayApp] { try await inner.apps() }
    func addAPIKey(_ key: StoredAPIKey) async throws { try await inner.addAPIKey(key) }
    func apiKey(id: String) async throws -> StoredAPIKey? {
        return try await inner.apiKey(id: id)
    }
    func removeApp(id: String) async throws -> AppRemoval? { try await inner.removeApp(id: id) }
    func removeAPIKey(id: String) async throws -> Bool { try await inner.removeAPIKey(id: id) }
    func apiKeys(appID: String?) async throws -> [StoredAPIKey] { try await inner.apiKeys(appID: appID) }
    func touchAPIKey(id: String, at: Date) async throws { try await inner.touchAPIKey(id: id, at: at) }
    func putDevice(
        appID: String, deviceID: String, address: PushAddress, registration: DeviceRegistration, userID: String?,
        now: Date
    ) async throws -> DevicePutResult {
        try await inner.putDevice(
            appID: appID, deviceID: deviceID, address: address, registration: registration, userID: userID, now: now)
    }
    func device(appID: String, deviceID: String) async throws -> StoredDevice? {
        try await inner.device(appID: appID, deviceID: deviceID)
    }
    func devices(appID: String, deviceIDs: [String]) async throws -> [StoredDevice] {
        return try await inner.devices(appID: appID, deviceIDs: deviceIDs)
    }
    func devices(appID: String, userIDs: [String]) async throws -> [StoredDevice] {
        try await inner.devices(appID: appID, userIDs: userIDs)
    }
    func removeDevices(appID: String, userID: String, now: Date) async throws -> [String] {
        try await inner.removeDevices(appID: appID, userID: userID, now: now)
    }
    func removeDevice(appID: String, deviceID: String, now: Date) async throws -> Bool {
        try await inner.removeDevice(appID: appID, deviceID: deviceID, now: now)
    }
    func markDeviceUnregistered(appID: String, deviceID: String, reason: String, at: Date) async throws -> Bool {
        try await inner.markDeviceUnregistered(appID: appID, deviceID: deviceID, reason: reason, at: at)
    }
    func notificationID(appID: String, idempotencyKey: String) async throws -> UUID? {
        try await inner.notificationID(appID: appID, idempotencyKey: idempotencyKey)
    }

    func idempotentRequest(appID: String, idempotencyKey: String) async throws -> (id: UUID, requestDigest: String?)? {
        try await inner.idempotentRequest(appID: appID, idempotencyKey: idempotencyKey)
    }
    func enqueue(_ notification: NewNotification) async throws -> EnqueueResult { try await inner.enqueue(notification) }
    func enqueueBatch(_ notifications: [NewNotification]) async throws -> [Result<EnqueueResult, GatewayStoreError>] {
        for notification in notifications {
            for job in notification.jobs where target.take(job.deviceID) {
                try await registerAgain(appID: notification.appID, deviceID: job.deviceID)
            }
        }
        return try await inner.enqueueBatch(notifications)
    }
    func claim(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws -> [ClaimedJob] {
        try await inner.claim(owner: owner, limit: limit, leaseDuration: leaseDuration, now: now)
    }
    func finish(
        jobID: Int64, owner: String, outcome: JobOutcome, requests: Int, transientReason: String?, now: Date
    ) async throws -> Bool {
        try await inner.finish(
            jobID: jobID, owner: owner, outcome: outcome, requests: requests, transientReason: transientReason, now: now)
    }
    func expireOverdue(now: Date) async throws -> [PushPlatform: Int] { try await inner.expireOverdue(now: now) }
    func purgeExpired(before cutoff: Date, limit: Int) async throws -> Int {
        try await inner.purgeExpired(before: cutoff, limit: limit)
    }
    func notificationStatus(appID: String, notificationID: UUID) async throws -> NotificationStatus? {
        try await inner.notificationStatus(appID: appID, notificationID: notificationID)
    }
    func withdraw(appID: String, notificationID: UUID, now: Date) async throws -> Withdrawal? {
        try await inner.withdraw(appID: appID, notificationID: notificationID, now: now)
    }
    func device(appID: String, keyID: String) async throws -> StoredDevice? { try await inner.device(appID: appID, keyID: keyID) }
    func recordReceipt(_ receipt: ReceivedReceipt) async throws -> ReceiptRecording { try await inner.recordReceipt(receipt) }
    func recordReceipts(_ receipts: [ReceivedReceipt]) async throws -> [ReceiptRecording] { try await inner.recordReceipts(receipts) }
    func queueDepth() async throws -> QueueDepth { try await inner.queueDepth() }
    func node(id nodeID: String) async throws -> NodeInstance? { try await inner.node(id: nodeID) }
    func nodes() async throws -> [NodeInstance] { try await inner.nodes() }
    func queueSummary() async throws -> QueueSummary { try await inner.queueSummary() }
    func takeOverNode(_ instance: NodeInstance, replacing previousBootID: String?, now: Date) async throws -> Int? {
        try await inner.takeOverNode(instance, replacing: previousBootID, now: now)
    }
    func heartbeat(_ instance: NodeInstance, now: Date) async throws -> Bool { try await inner.heartbeat(instance, now: now) }
    func releaseNode(_ instance: NodeInstance) async throws { try await inner.releaseNode(instance) }
    func leasedJobs(nodeID: String) async throws -> [LeasedJob] { try await inner.leasedJobs(nodeID: nodeID) }
    func claimWebhookEvents(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws
        -> [StoredWebhookEvent]
    {
        try await inner.claimWebhookEvents(owner: owner, limit: limit, leaseDuration: leaseDuration, now: now)
    }
    func renewWebhookEvents(owner: String, leaseDuration: Duration, now: Date) async throws -> Int {
        try await inner.renewWebhookEvents(owner: owner, leaseDuration: leaseDuration, now: now)
    }
    func recordWebhookAttempts(id: Int64, owner: String, attempts: Int) async throws -> Bool {
        try await inner.recordWebhookAttempts(id: id, owner: owner, attempts: attempts)
    }
    func endWebhookEvent(id: Int64, owner: String) async throws -> Bool {
        try await inner.endWebhookEvent(id: id, owner: owner)
    }
    func webhookOutboxDepth() async throws -> WebhookOutboxDepth { try await inner.webhookOutboxDepth() }
    func giveUpWebhookEvent(id: Int64, owner: String, attempts: Int, failure: String, now: Date) async throws -> Bool {
        try await inner.giveUpWebhookEvent(id: id, owner: owner, attempts: attempts, failure: failure, now: now)
    }
    func givenUpWebhookEvents(appID: String?, limit: Int) async throws -> [GivenUpWebhookEvent] {
        try await inner.givenUpWebhookEvents(appID: appID, limit: limit)
    }
    func redeliverWebhookEvents(appID: String?, ids: [Int64]?) async throws -> Int {
        try await inner.redeliverWebhookEvents(appID: appID, ids: ids)
    }
    func releaseWebhookEvent(id: Int64, owner: String, attempts: Int) async throws -> Bool {
        try await inner.releaseWebhookEvent(id: id, owner: owner, attempts: attempts)
    }
}
