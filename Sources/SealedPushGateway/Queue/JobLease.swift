#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A lease to enqueue a notification's jobs under (``NewNotification/lease``): its jobs go in `claimed` by
/// ``owner`` until ``expiresAt`` instead of `queued`, and come back in ``EnqueueResult/claimed`` — a node that
/// delivers in the same process sends them without claiming them from the store
/// (``DeliveryService/reserve(jobs:)``). The lease is an ordinary one: after ``expiresAt``, or when the owner's
/// node starts again (``GatewayStore/takeOverNode(_:replacing:now:)``), any claim takes the jobs over.
public struct JobLease: Sendable, Hashable {
    /// The lease owner (``NodeInstance/leaseOwner``).
    public var owner: String
    /// When the lease ends.
    public var expiresAt: Date

    /// Creates a lease.
    /// - Parameters:
    ///   - owner: The lease owner.
    ///   - expiresAt: When it ends.
    public init(owner: String, expiresAt: Date) {
        self.owner = owner
        self.expiresAt = expiresAt
    }
}
