#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The open jobs, for an operator (`sealed-push-gateway status`): per app, and the leases per process holding them.
public struct QueueSummary: Sendable, Hashable {
    /// One app's open jobs.
    public struct App: Sendable, Hashable {
        /// The app.
        public var appID: String
        /// Jobs waiting for a claim.
        public var queued: Int
        /// Jobs a process holds a lease on.
        public var claimed: Int
        /// When the longest-waiting queued job became due (nil with none queued): how far behind delivery is.
        public var oldestQueuedDue: Date?

        /// Creates an app's line.
        public init(appID: String, queued: Int, claimed: Int, oldestQueuedDue: Date?) {
            self.appID = appID
            self.queued = queued
            self.claimed = claimed
            self.oldestQueuedDue = oldestQueuedDue
        }
    }

    /// The apps with open jobs, by id.
    public var apps: [App]
    /// Claimed jobs by lease owner (`nodeId/bootId`, ``NodeInstance/leaseOwner``).
    public var leases: [String: Int]

    /// Creates a summary.
    public init(apps: [App], leases: [String: Int]) {
        self.apps = apps
        self.leases = leases
    }
}
