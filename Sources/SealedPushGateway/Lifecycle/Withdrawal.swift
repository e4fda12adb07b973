#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ``GatewayStore/withdraw(appID:notificationID:now:)`` did (`Specs/control-v1.md` §2.2: withdraw at the
/// sender, then remove on the devices that got it).
public struct Withdrawal: Sendable, Hashable {
    /// The notification's `apns-collapse-id`.
    public var collapseID: String?
    /// When the notification expires.
    public var expiresAt: Date
    /// Jobs this call ended `withdrawn` (0 when a previous withdrawal already did).
    public var withdrawnNow: Int
    /// Devices that may show it: jobs `sent`, and jobs that were in a worker's hands (`claimed`) when it was
    /// withdrawn, whose send may have gone out. Sorted; the same on every call for one notification.
    public var reachedDevices: [String]
    /// True when an earlier call had withdrawn it.
    public var alreadyWithdrawn: Bool

    /// Creates a result.
    public init(collapseID: String?, expiresAt: Date, withdrawnNow: Int, reachedDevices: [String], alreadyWithdrawn: Bool) {
        self.collapseID = collapseID
        self.expiresAt = expiresAt
        self.withdrawnNow = withdrawnNow
        self.reachedDevices = reachedDevices
        self.alreadyWithdrawn = alreadyWithdrawn
    }

    /// The `failure_reason` of a job withdrawn while queued (never sent).
    public static let reasonQueued = "Withdrawn"
    /// The `failure_reason` of a job withdrawn while a worker held it (its send may have gone out).
    public static let reasonInFlight = "WithdrawnInFlight"
}
