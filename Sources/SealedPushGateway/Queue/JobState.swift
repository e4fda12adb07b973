/// The state of one device's job. `claimed` is internal (a worker holds a lease); the HTTP API reports it as
/// `queued`.
public enum JobState: String, Sendable, Hashable, CaseIterable {
    /// Waiting for a worker (possibly until a retry time).
    case queued
    /// Held by a worker until its lease expires; then any worker may take it over.
    case claimed
    /// APNs answered 200; the apns-id is recorded.
    case sent
    /// APNs refused it, or retries ran out; the reason is recorded.
    case failed
    /// Its ttl passed before APNs took it.
    case expired
    /// The device was unregistered (APNs 410, `BadDeviceToken`, `DeviceTokenNotForTopic`) or removed; not sent.
    case unregistered
    /// The sender withdrew the notification before it was sent (`DELETE …/notifications/{id}`); never sent. The
    /// reason says whether a worker held it then (`WithdrawnInFlight`: its send may have gone out).
    case withdrawn

    /// True for the states a job never leaves.
    public var isFinal: Bool {
        switch self {
        case .queued, .claimed: false
        case .sent, .failed, .expired, .unregistered, .withdrawn: true
        }
    }
}
