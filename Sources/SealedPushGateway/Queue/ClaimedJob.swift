import SealedPushCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A job a worker holds a lease on: everything needed to send it to APNs.
public struct ClaimedJob: Sendable, Hashable {
    /// The job's id (pass it back to ``GatewayStore/finish(jobID:owner:outcome:now:)``).
    public var id: Int64
    /// The notification it belongs to.
    public var notificationID: UUID
    /// The app (its topic and keys: ``GatewayStore/app(id:)``).
    public var appID: String
    /// The recipient device.
    public var deviceID: String
    /// The device's token at claim time (recorded on the job).
    public var apnsToken: String
    /// The token's environment.
    public var environment: APNsEnvironment
    /// The sealed APNs body.
    public var body: SealedBody
    /// `apns-priority`.
    public var priority: Int
    /// `apns-collapse-id`.
    public var collapseID: String?
    /// When the notification expires (`apns-expiration`).
    public var expiresAt: Date
    /// How many times the job has been claimed, this claim included.
    public var attempts: Int
    /// When this lease ends; after it, another worker may take the job over.
    public var leaseExpiresAt: Date

    /// Creates a claimed job (stores build these).
    public init(
        id: Int64, notificationID: UUID, appID: String, deviceID: String, apnsToken: String,
        environment: APNsEnvironment, body: SealedBody, priority: Int, collapseID: String?, expiresAt: Date,
        attempts: Int, leaseExpiresAt: Date
    ) {
        self.id = id
        self.notificationID = notificationID
        self.appID = appID
        self.deviceID = deviceID
        self.apnsToken = apnsToken
        self.environment = environment
        self.body = body
        self.priority = priority
        self.collapseID = collapseID
        self.expiresAt = expiresAt
        self.attempts = attempts
        self.leaseExpiresAt = leaseExpiresAt
    }
}
