/// How much work is outstanding (the `queue depth` metric).
public struct QueueDepth: Sendable, Hashable {
    /// Jobs waiting for a worker (retries waiting for their time included).
    public var queued: Int
    /// Jobs held by a worker (expired leases included, until taken over).
    public var claimed: Int
    /// `queued + claimed`.
    public var total: Int { queued + claimed }

    /// Creates a depth.
    public init(queued: Int, claimed: Int) {
        self.queued = queued
        self.claimed = claimed
    }
}
