import Foundation
import SealedPushCore
import SealedPushGateway

/// A store that runs test hooks around some calls and passes everything to `inner`: a ping that takes its time, a
/// count of claims, counts of API key, app and device reads.
public struct HookedGatewayStore: GatewayStore {
    let inner: any GatewayStore
    let beforePing: @Sendable () async throws -> Void
    let afterClaim: @Sendable ([ClaimedJob]) -> Void
    let beforeAPIKey: @Sendable (String) -> Void
    let beforeApp: @Sendable (String) -> Void
    let beforeDevices: @Sendable ([String]) -> Void
    let beforeWebhookRelease: @Sendable (Int64) throws -> Void

    /// - Parameters:
    ///   - inner: The store that does the work.
    ///   - beforePing: Runs before each `ping()` goes to `inner`.
    ///   - afterClaim: Sees what each `claim` returned.
    ///   - beforeAPIKey: Sees the id of each `apiKey(id:)` read.
    ///   - beforeApp: Sees the id of each `app(id:)` read.
    ///   - beforeDevices: Sees the ids of each `devices(appID:deviceIDs:)` read.
    ///   - beforeWebhookRelease: Runs before each `releaseWebhookEvent` with the event's id; what it throws is the
    ///     call's error (a database unreachable when a node stops).
    public init(
        inner: any GatewayStore, beforePing: @escaping @Sendable () async throws -> Void = {},
        afterClaim: @escaping @Sendable ([ClaimedJob]) -> Void = { _ in },
        beforeAPIKey: @escaping @Sendable (String) -> Void = { _ in },
        beforeApp: @escaping @Sendable (String) -> Void = { _ in },
        beforeDevices: @escaping @Sendable ([String]) -> Void = { _ in },
        beforeWebhookRelease: @escaping @Sendable (Int64) throws -> Void = { _ in }
    ) {
        self.inner = inner
        self.beforePing = beforePing
        self.afterClaim = afterClaim
        self.beforeAPIKey = beforeAPIKey
        self.beforeApp = beforeApp
        self.beforeDevices = beforeDevices
        self.beforeWebhookRelease = beforeWebhookRelease
    }

    public var writeProblem: String? { inner.writeProblem }

    public func ping() async throws {
        try await beforePing()
        try await inner.ping()
    }

    public func migrate() async throws -> Int { try await inner.migrate() }
    public func schemaVersion() async throws -> Int { try await inner.schemaVersion() }
    public func close() async throws { try await inner.close() }
    public func putApp(_ app: GatewayApp, now: Date) async throws { try await inner.putApp(app, now: now) }
    public func app(id: String) async throws -> GatewayApp? {
        beforeApp(id)
        return try await inner.app(id: id)
    }
    public func apps() async throws -> [GatewayApp] { try await inner.apps() }
    public func addAPIKey(_ key: StoredAPIKey) async throws { try await inner.addAPIKey(key) }
    public func apiKey(id: String) async throws -> StoredAPIKey? {
        beforeAPIKey(id)
        return try await inner.apiKey(id: id)
    }
    public func removeApp(id: String) async throws -> AppRemoval? { try await inner.removeApp(id: id) }
    public func removeAPIKey(id: String) async throws -> Bool { try await inner.removeAPIKey(id: id) }
    public func apiKeys(appID: String?) async throws -> [StoredAPIKey] { try await inner.apiKeys(appID: appID) }
    public func touchAPIKey(id: String, at: Date) async throws { try await inner.touchAPIKey(id: id, at: at) }
    public func putDevice(
        appID: String, deviceID: String, address: PushAddress, registration: DeviceRegistration, userID: String?,
        now: Date
    ) async throws -> DevicePutResult {
        try await inner.putDevice(
            appID: appID, deviceID: deviceID, address: address, registration: registration, userID: userID, now: now)
    }
    public func device(appID: String, deviceID: String) async throws -> StoredDevice? {
        try await inner.device(appID: appID, deviceID: deviceID)
    }
    public func devices(appID: String, deviceIDs: [String]) async throws -> [StoredDevice] {
        beforeDevices(deviceIDs)
        return try await inner.devices(appID: appID, deviceIDs: deviceIDs)
    }
    public func devices(appID: String, userIDs: [String]) async throws -> [StoredDevice] {
        try await inner.devices(appID: appID, userIDs: userIDs)
    }
    public func removeDevices(appID: String, userID: String, now: Date) async throws -> [String] {
        try await inner.removeDevices(appID: appID, userID: userID, now: now)
    }
    public func removeDevice(appID: String, deviceID: String, now: Date) async throws -> Bool {
        try await inner.removeDevice(appID: appID, deviceID: deviceID, now: now)
    }
    public func markDeviceUnregistered(appID: String, deviceID: String, reason: String, at: Date) async throws -> Bool {
        try await inner.markDeviceUnregistered(appID: appID, deviceID: deviceID, reason: reason, at: at)
    }
    public func notificationID(appID: String, idempotencyKey: String) async throws -> UUID? {
        try await inner.notificationID(appID: appID, idempotencyKey: idempotencyKey)
    }

    public func idempotentRequest(appID: String, idempotencyKey: String) async throws -> (id: UUID, requestDigest: String?)? {
        try await inner.idempotentRequest(appID: appID, idempotencyKey: idempotencyKey)
    }
    public func enqueue(_ notification: NewNotification) async throws -> EnqueueResult { try await inner.enqueue(notification) }
    public func enqueueBatch(_ notifications: [NewNotification]) async throws -> [Result<EnqueueResult, GatewayStoreError>] { try await inner.enqueueBatch(notifications) }
    public func claim(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws -> [ClaimedJob] {
        let jobs = try await inner.claim(owner: owner, limit: limit, leaseDuration: leaseDuration, now: now)
        afterClaim(jobs)
        return jobs
    }
    public func finish(
        jobID: Int64, owner: String, outcome: JobOutcome, requests: Int, transientReason: String?, now: Date
    ) async throws -> Bool {
        try await inner.finish(
            jobID: jobID, owner: owner, outcome: outcome, requests: requests, transientReason: transientReason, now: now)
    }
    public func expireOverdue(now: Date) async throws -> [PushPlatform: Int] { try await inner.expireOverdue(now: now) }
    public func purgeExpired(before cutoff: Date, limit: Int) async throws -> Int {
        try await inner.purgeExpired(before: cutoff, limit: limit)
    }
    public func notificationStatus(appID: String, notificationID: UUID) async throws -> NotificationStatus? {
        try await inner.notificationStatus(appID: appID, notificationID: notificationID)
    }
    public func withdraw(appID: String, notificationID: UUID, now: Date) async throws -> Withdrawal? {
        try await inner.withdraw(appID: appID, notificationID: notificationID, now: now)
    }
    public func device(appID: String, keyID: String) async throws -> StoredDevice? { try await inner.device(appID: appID, keyID: keyID) }
    public func recordReceipt(_ receipt: ReceivedReceipt) async throws -> ReceiptRecording { try await inner.recordReceipt(receipt) }
    public func recordReceipts(_ receipts: [ReceivedReceipt]) async throws -> [ReceiptRecording] { try await inner.recordReceipts(receipts) }
    public func queueDepth() async throws -> QueueDepth { try await inner.queueDepth() }
    public func node(id nodeID: String) async throws -> NodeInstance? { try await inner.node(id: nodeID) }
    public func nodes() async throws -> [NodeInstance] { try await inner.nodes() }
    public func queueSummary() async throws -> QueueSummary { try await inner.queueSummary() }
    public func takeOverNode(_ instance: NodeInstance, replacing previousBootID: String?, now: Date) async throws -> Int? {
        try await inner.takeOverNode(instance, replacing: previousBootID, now: now)
    }
    public func heartbeat(_ instance: NodeInstance, now: Date) async throws -> Bool { try await inner.heartbeat(instance, now: now) }
    public func releaseNode(_ instance: NodeInstance) async throws { try await inner.releaseNode(instance) }
    public func leasedJobs(nodeID: String) async throws -> [LeasedJob] { try await inner.leasedJobs(nodeID: nodeID) }
    public func claimWebhookEvents(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws
        -> [StoredWebhookEvent]
    {
        try await inner.claimWebhookEvents(owner: owner, limit: limit, leaseDuration: leaseDuration, now: now)
    }
    public func renewWebhookEvents(owner: String, leaseDuration: Duration, now: Date) async throws -> Int {
        try await inner.renewWebhookEvents(owner: owner, leaseDuration: leaseDuration, now: now)
    }
    public func recordWebhookAttempts(id: Int64, owner: String, attempts: Int) async throws -> Bool {
        try await inner.recordWebhookAttempts(id: id, owner: owner, attempts: attempts)
    }
    public func endWebhookEvent(id: Int64, owner: String) async throws -> Bool {
        try await inner.endWebhookEvent(id: id, owner: owner)
    }
    public func webhookOutboxDepth() async throws -> WebhookOutboxDepth { try await inner.webhookOutboxDepth() }
    public func giveUpWebhookEvent(id: Int64, owner: String, attempts: Int, failure: String, now: Date) async throws
        -> Bool
    {
        try await inner.giveUpWebhookEvent(id: id, owner: owner, attempts: attempts, failure: failure, now: now)
    }
    public func givenUpWebhookEvents(appID: String?, limit: Int) async throws -> [GivenUpWebhookEvent] {
        try await inner.givenUpWebhookEvents(appID: appID, limit: limit)
    }
    public func redeliverWebhookEvents(appID: String?, ids: [Int64]?) async throws -> Int {
        try await inner.redeliverWebhookEvents(appID: appID, ids: ids)
    }
    public func releaseWebhookEvent(id: Int64, owner: String, attempts: Int) async throws -> Bool {
        try beforeWebhookRelease(id)
        return try await inner.releaseWebhookEvent(id: id, owner: owner, attempts: attempts)
    }
}
