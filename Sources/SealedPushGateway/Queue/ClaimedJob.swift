import SealedPushCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A job a worker holds a lease on: everything needed to send it to its device's platform.
public struct ClaimedJob: Sendable, Hashable {
    /// The job's id (pass it back to ``GatewayStore/finish(jobID:owner:outcome:now:)``).
    public var id: Int64
    /// The notification it belongs to.
    public var notificationID: UUID
    /// The app (its topic and keys: ``GatewayStore/app(id:)``).
    public var appID: String
    /// The recipient device.
    public var deviceID: String
    /// The device's platform and token at claim time (the token is recorded on the job).
    public var address: PushAddress
    /// The sealed body: an APNs body, or an FCM message's `data` (``SealedBody/platform``).
    public var body: SealedBody
    /// `apns-priority` (10 or 5; FCM: 10 is `high`, 5 `normal`).
    public var priority: Int
    /// `apns-collapse-id` (FCM: `android.collapse_key`).
    public var collapseID: String?
    /// When the notification expires (`apns-expiration`; FCM: `android.ttl` counts down to it).
    public var expiresAt: Date
    /// When the gateway accepted the notification (its `created_at`): where its delivery latency is counted from.
    public var acceptedAt: Date
    /// How many times the job has been claimed, this claim included.
    public var attempts: Int
    /// When this lease ends; after it, another worker may take the job over.
    public var leaseExpiresAt: Date

    /// The APNs token of an APNs job; nil for FCM.
    public var apnsToken: String? { address.platform == .apns ? address.token : nil }
    /// The APNs environment of an APNs job; nil for FCM.
    public var environment: APNsEnvironment? { address.apnsEnvironment }

    /// Creates a claimed job (stores build these).
    public init(
        id: Int64, notificationID: UUID, appID: String, deviceID: String, address: PushAddress, body: SealedBody,
        priority: Int, collapseID: String?, expiresAt: Date, acceptedAt: Date, attempts: Int, leaseExpiresAt: Date
    ) {
        self.id = id
        self.notificationID = notificationID
        self.appID = appID
        self.deviceID = deviceID
        self.address = address
        self.body = body
        self.priority = priority
        self.collapseID = collapseID
        self.expiresAt = expiresAt
        self.acceptedAt = acceptedAt
        self.attempts = attempts
        self.leaseExpiresAt = leaseExpiresAt
    }
}
