#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ``GatewayStore/enqueue(_:)`` did.
public struct EnqueueResult: Sendable, Hashable {
    /// The notification's id: the new one, or the first request's when ``replayed``.
    public var id: UUID
    /// True when the idempotency key was seen before: nothing was written and ``id`` is the first request's.
    public var replayed: Bool
    /// How many device jobs the notification has.
    public var jobCount: Int
    /// When ``replayed``: the digest the first request kept with the key (nil if it kept none).
    public var requestDigest: String?
    /// The jobs enqueued `claimed` under the notification's ``NewNotification/lease``, in its jobs' order (those of
    /// unregistered devices left out); empty without a lease and when ``replayed``.
    public var claimed: [ClaimedJob]
    /// When ``replayed``: the devices the first request left out (``NewNotification/skippedDevices``).
    public var skippedDevices: [SkippedDevice]

    /// Creates a result.
    /// - Parameters:
    ///   - id: The notification id.
    ///   - replayed: Whether this repeated an earlier request.
    ///   - jobCount: The number of jobs.
    ///   - requestDigest: When replayed, the first request's digest.
    ///   - claimed: The jobs enqueued under the notification's lease.
    ///   - skippedDevices: When replayed, the devices the first request left out.
    public init(
        id: UUID, replayed: Bool, jobCount: Int, requestDigest: String? = nil, claimed: [ClaimedJob] = [],
        skippedDevices: [SkippedDevice] = []
    ) {
        self.skippedDevices = skippedDevices
        self.claimed = claimed
        self.id = id
        self.replayed = replayed
        self.jobCount = jobCount
        self.requestDigest = requestDigest
    }
}
