#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A job some node holds a lease on (state `claimed`), as ``GatewayStore/leasedJobs(nodeID:)`` lists them.
public struct LeasedJob: Sendable, Hashable {
    /// The job's id.
    public var id: Int64
    /// Its notification.
    public var notificationID: UUID
    /// Its device.
    public var deviceID: String
    /// The lease owner (`nodeID/bootID`, see ``NodeInstance/leaseOwner``).
    public var owner: String
    /// When the lease ends.
    public var leaseExpiresAt: Date

    /// Creates a record.
    public init(id: Int64, notificationID: UUID, deviceID: String, owner: String, leaseExpiresAt: Date) {
        self.id = id
        self.notificationID = notificationID
        self.deviceID = deviceID
        self.owner = owner
        self.leaseExpiresAt = leaseExpiresAt
    }
}
