#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A notification and the state of each device's delivery.
public struct NotificationStatus: Sendable, Hashable {
    /// One device's delivery.
    public struct Delivery: Sendable, Hashable {
        /// The device id.
        public var deviceID: String
        /// The job's state (`claimed` is reported as `queued` by the HTTP API).
        public var state: JobState
        /// The `apns-id` APNs answered with, once sent.
        public var apnsID: String?
        /// APNs's or the gateway's reason for the last failure, retry or unregistration.
        public var reason: String?
        /// APNs requests made for it, the APNs client's own retries included, plus one while a worker holds it
        /// (its request in flight). A claim cut off (a crash, a lease taken over) counts as one request.
        public var attempts: Int
        /// The reason of the last request that failed transiently (`TooManyRequests`, `ServiceUnavailable`,
        /// `NotProcessed`, `ConnectionLost`, `Timeout`…), even if a later one went through; nil when none did.
        public var lastTransientReason: String?
        /// When the job last changed.
        public var updatedAt: Date
        /// The device's first sealed receipt about it (`Specs/control-v1.md` §4), if one arrived.
        public var receipt: JobReceipt?

        /// Creates a delivery record.
        public init(
            deviceID: String, state: JobState, apnsID: String?, reason: String?, attempts: Int,
            lastTransientReason: String? = nil, updatedAt: Date, receipt: JobReceipt? = nil
        ) {
            self.receipt = receipt
            self.deviceID = deviceID
            self.state = state
            self.apnsID = apnsID
            self.reason = reason
            self.attempts = attempts
            self.lastTransientReason = lastTransientReason
            self.updatedAt = updatedAt
        }
    }

    /// The notification id.
    public var id: UUID
    /// The app it belongs to.
    public var appID: String
    /// `apns-priority`.
    public var priority: Int
    /// `apns-collapse-id`.
    public var collapseID: String?
    /// When it was accepted.
    public var createdAt: Date
    /// When it expires.
    public var expiresAt: Date
    /// One entry per device, ordered by device id.
    public var deliveries: [Delivery]
    /// When the sender withdrew it, if it did.
    public var withdrawnAt: Date?
    /// What it is: content, an update of a notification, or a control message.
    public var kind: NotificationKind
    /// The devices the send reached only through their users and left out (``NewNotification/skippedDevices``), in
    /// the send's order.
    public var skippedDevices: [SkippedDevice]

    /// Creates a status.
    public init(
        id: UUID, appID: String, priority: Int, collapseID: String?, createdAt: Date, expiresAt: Date,
        deliveries: [Delivery], withdrawnAt: Date? = nil, kind: NotificationKind = .content,
        skippedDevices: [SkippedDevice] = []
    ) {
        self.skippedDevices = skippedDevices
        self.kind = kind
        self.withdrawnAt = withdrawnAt
        self.id = id
        self.appID = appID
        self.priority = priority
        self.collapseID = collapseID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.deliveries = deliveries
    }
}
