import Foundation
import SealedPushCore
import SealedPushGateway

/// Counts the claims that took at least one job; everything else goes to `inner`.
struct ClaimCountingStore: GatewayStore {
    /// The count, shared with the test.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var claims = 0
        var value: Int { lock.withLock { claims } }
        func count() { lock.withLock { claims += 1 } }
    }

    let inner: any GatewayStore
    let counter: Counter

    func ping() async throws { try await inner.ping() }
    func migrate() async throws -> Int { try await inner.migrate() }
    func schemaVersion() async throws -> Int { try await inner.schemaVersion() }
    func close() async throws { try await inner.close() }
    func putApp(_ app: GatewayApp, now: Date) async throws { try await inner.putApp(app, now: now) }
    func app(id: String) async throws -> GatewayApp? { try await inner.app(id: id) }
    func apps() async throws -> [GatewayApp] { try await inner.apps() }
    func addAPIKey(_ key: StoredAPIKey) async throws { try await inner.addAPIKey(key) }
    func apiKey(id: String) async throws -> StoredAPIKey? { try await inner.apiKey(id: id) }
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
        try await inner.devices(appID: appID, deviceIDs: deviceIDs)
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
    func enqueueBatch(_ notifications: [NewNotification]) async throws -> [Result<EnqueueResult, GatewayStoreError>] { try await inner.enqueueBatch(notifications) }
    func claim(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws -> [ClaimedJob] {
        let jobs = try await inner.claim(owner: owner, limit: limit, leaseDuration: leaseDuration, now: now)
        if !jobs.isEmpty { counter.count() }
        return jobs
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
    func takeOverNode(_ instance: NodeInstance, replacing previousBootID: String?, now: Date) async throws -> Int? {
        try await inner.takeOverNode(instance, replacing: previousBootID, now: now)
    }
    func heartbeat(_ instance: NodeInstance, now: Date) async throws -> Bool { try await inner.heartbeat(instance, now: now) }
    func releaseNode(_ instance: NodeInstance) async throws { try await inner.releaseNode(instance) }
    func leasedJobs(nodeID: String) async throws -> [LeasedJob] { try await inner.leasedJobs(nodeID: nodeID) }
}
