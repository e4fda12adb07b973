import Foundation

/// Counters of a client's life (a snapshot is ``APNsClient/statistics``).
public struct APNsClientCounters: Sendable, Hashable {
    /// Connections that became ready.
    public var connectionsOpened = 0
    /// Connections that carried at least one request.
    public var connectionsUsed = 0
    /// Connection attempts that failed.
    public var connectFailures = 0
    /// GOAWAY frames received.
    public var goAwaysReceived = 0
    /// Connections retired because a request reached its deadline while they read nothing at all.
    public var silentConnectionsRetired = 0
    /// Requests sent (all attempts).
    public var requestsSent = 0
    /// Retries after 429/500/503 or transport failures (with backoff).
    public var retries = 0
    /// Immediate resends of requests cut off before APNs processed them (GOAWAY, refused streams).
    public var resends = 0
    /// Requests that ended at their deadline without an answer.
    public var timeouts = 0
    /// Provider tokens signed.
    public var tokensIssued = 0
    /// The most requests that were in flight at once on one connection.
    public var peakStreamsPerConnection = 0
}

/// Thread-safe counters.
final class APNsClientStatistics: @unchecked Sendable {
    private let lock = NSLock()
    private var counters = APNsClientCounters()

    func increment(_ keyPath: WritableKeyPath<APNsClientCounters, Int>, by amount: Int = 1) {
        lock.withLock { counters[keyPath: keyPath] += amount }
    }

    func recordPeak(_ value: Int) {
        lock.withLock { counters.peakStreamsPerConnection = max(counters.peakStreamsPerConnection, value) }
    }

    var snapshot: APNsClientCounters { lock.withLock { counters } }
}
