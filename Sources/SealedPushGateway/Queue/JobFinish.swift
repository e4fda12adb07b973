import Foundation

/// One claimed job's end, as ``GatewayStore/finish(_:)`` takes it in a batch.
public struct JobFinish: Sendable, Hashable {
    /// The job.
    public var jobID: Int64
    /// The lease owner that claimed it.
    public var owner: String
    /// How it ended (or when to try again).
    public var outcome: JobOutcome
    /// Provider requests made for it during this claim.
    public var requests: Int
    /// The last transient failure's reason during this claim, if any.
    public var transientReason: String?
    /// When it ended.
    public var now: Date
    /// With an `unregistered` outcome: the event the store writes to the webhook's outbox, in the same transaction,
    /// when this end marks the device unregistered (its token is still the job's); nil: none is written.
    public var webhookEvent: UnregisteredDeviceEvent?

    /// Creates a job's end.
    /// - Parameters:
    ///   - jobID: The job.
    ///   - owner: The lease owner that claimed it.
    ///   - outcome: How it ended.
    ///   - requests: Provider requests made during this claim.
    ///   - transientReason: The last transient failure's reason during this claim.
    ///   - now: When it ended.
    ///   - webhookEvent: The event for the webhook's outbox, should this end mark the device unregistered.
    public init(
        jobID: Int64, owner: String, outcome: JobOutcome, requests: Int, transientReason: String?, now: Date,
        webhookEvent: UnregisteredDeviceEvent? = nil
    ) {
        self.jobID = jobID
        self.owner = owner
        self.outcome = outcome
        self.requests = requests
        self.transientReason = transientReason
        self.now = now
        self.webhookEvent = webhookEvent
    }
}
