import Foundation
import SealedPushAPNs
import SealedPushCore
import SealedPushFCM

/// How a ``DeliveryService`` claims, sends and retries.
///
/// Leases are sized, not renewed: a job is sent as soon as it is claimed (the service claims only as many jobs as
/// it has free send slots), and one send through `APNsClient` ends within the client's `deadline`. The lease must
/// outlast that with a margin (``leaseMargin``), so a slow send never loses its lease mid-flight, while a node
/// that dies has its claims taken over by another node once ``leaseDuration`` has passed.
public struct DeliveryConfiguration: Sendable {
    /// The least time a lease must outlast the APNs client's deadline (finishing the job in the store).
    public static let leaseMargin: Duration = .seconds(10)

    /// This node's id: the lease owner in the store. Must be unique among the nodes sharing a database.
    public var nodeID: String
    /// Where production tokens are sent (default Apple's `api.push.apple.com:443`).
    public var productionEndpoint: APNsEndpoint
    /// Where sandbox tokens are sent (default Apple's development host).
    public var sandboxEndpoint: APNsEndpoint
    /// The APNs clients' settings (trust roots, connections, timeouts, the client's own retries). Its `endpoint`
    /// is replaced by ``productionEndpoint`` or ``sandboxEndpoint``, its `proxy` by ``proxy``.
    public var client: APNsClientConfiguration
    /// Where FCM is (default `fcm.googleapis.com`; the FCM emulator in tests), with the certificate to trust
    /// instead of the system's, if any.
    public var fcmEndpoint: FCMEndpoint
    /// The FCM client's answer timeout per request.
    public var fcmRequestTimeout: Duration
    /// An HTTP proxy every APNs and FCM connection (the FCM token endpoint's too) tunnels through with `CONNECT`, or
    /// nil (default) to connect directly.
    public var proxy: ProviderProxy?
    /// The FCM client's own retries within one claim (429, 500, 503, connection loss, honouring `Retry-After`).
    /// A send's requests, retries and waits all end within the same per-send deadline as APNs's
    /// (`client.deadline`, which the lease covers): `maxTotal` and ``fcmRequestTimeout`` are cut to fit it.
    public var fcmRetry: FCMRetryPolicy
    /// The most sends in flight on this node, 1...10,000 (default 128: HTTP/2 providers take hundreds of streams per
    /// connection, and with 64 the node waited between claims; at most this many sends can be repeated after a crash).
    public var maxConcurrentSends: Int
    /// How long a claimed job is this node's (default 90 s); at least the client's `deadline` + ``leaseMargin``.
    public var leaseDuration: Duration
    /// How long an idle node waits before looking for due jobs again (default 250 ms). A finished send wakes it
    /// earlier.
    public var pollInterval: Duration
    /// The least time between two claims while the queue keeps draining (default 5 ms, at most ``pollInterval``).
    /// When a claim finds fewer jobs than it has slots for, the jobs queued next wait this long to be claimed
    /// together: with one device per send, each send's wake-up otherwise cost a claim of one job (10,199 claims for
    /// 10,288 jobs on PostgreSQL, half of the server's CPU in planning and running them).
    public var claimGatherInterval: Duration
    /// How often jobs of expired notifications are moved to `expired` (default 10 s).
    public var expirySweepInterval: Duration
    /// Job-level retries for transient failures that outlived the client's own retries (429, 500, 503, transport,
    /// timeouts): `maxAttempts` claims at most, then the job fails with the last reason; between claims the job
    /// waits `backoff(forRetry: attempts)` (default 8 attempts, 5 s doubling to 5 min).
    public var jobRetry: APNsRetryPolicy
    /// On graceful shutdown, how long sends in flight may take to finish (default 20 s); what is still running then
    /// is abandoned and left to lease expiry.
    public var shutdownGracePeriod: Duration
    /// How long an app record read from the store is used before it is read again (default 30 s); a changed key
    /// path, key id or team builds a new APNs client.
    public var appRefreshInterval: Duration
    /// How often a running node refreshes its heartbeat in the store's `nodes` table (default 2 s).
    public var nodeHeartbeatInterval: Duration
    /// How old a node's heartbeat must be before another process may start with its node id, when that process
    /// cannot be proven gone (default 10 s; at least twice the heartbeat interval). A process that ran on this
    /// machine and is gone (a `kill -9`, a crash) is taken over at once; see ``NodeInstance``.
    public var nodeStaleAfter: Duration
    /// How long a notification (its status, sealed bodies and idempotency key) is kept after it expired; nil keeps
    /// everything (default 7 days). At least one day, so an `Idempotency-Key` is honoured for at least 24 hours.
    /// Purged in batches at each expiry sweep.
    public var retention: Duration?
    /// The signed webhook told about unregistered devices; nil for none.
    public var webhook: UnregisteredWebhookConfiguration?
    /// The clock (lease, expiry and retry times written to the store).
    public var now: @Sendable () -> Date

    /// Creates a configuration with defaults.
    /// - Parameters:
    ///   - nodeID: This node's unique id (the lease owner).
    ///   - client: The APNs clients' settings; its endpoint is replaced per environment.
    public init(nodeID: String, client: APNsClientConfiguration = APNsClientConfiguration(endpoint: .production)) {
        self.nodeID = nodeID
        self.productionEndpoint = .production
        self.sandboxEndpoint = .sandbox
        self.client = client
        self.fcmEndpoint = .production
        self.fcmRequestTimeout = .seconds(10)
        self.proxy = nil
        self.fcmRetry = FCMRetryPolicy(maxAttempts: 3, maxTotal: .seconds(30))
        self.maxConcurrentSends = 128
        self.leaseDuration = .seconds(90)
        self.pollInterval = .milliseconds(250)
        self.claimGatherInterval = .milliseconds(5)
        self.expirySweepInterval = .seconds(10)
        self.jobRetry = APNsRetryPolicy(maxAttempts: 8, initialBackoff: .seconds(5), maxBackoff: .seconds(300))
        self.shutdownGracePeriod = .seconds(20)
        self.appRefreshInterval = .seconds(30)
        self.nodeHeartbeatInterval = .seconds(2)
        self.nodeStaleAfter = .seconds(10)
        self.retention = .seconds(7 * 86_400)
        self.webhook = nil
        self.now = { Date() }
    }

    /// The endpoint of an environment.
    public func endpoint(for environment: APNsEnvironment) -> APNsEndpoint {
        switch environment {
        case .production: productionEndpoint
        case .sandbox: sandboxEndpoint
        }
    }

    /// Checks the limits above.
    /// - Throws: `SealedPushError` with code `invalidArgument` naming the setting.
    func validate() throws {
        func check(_ condition: Bool, _ message: String) throws {
            if !condition { throw SealedPushError(.invalidArgument, "delivery configuration: " + message) }
        }
        try check(!nodeID.isEmpty && nodeID.utf8.count <= 200, "nodeID must be 1-200 bytes")
        try check((1...10_000).contains(maxConcurrentSends), "maxConcurrentSends must be 1...10000 (got \(maxConcurrentSends))")
        try check(
            leaseDuration >= client.deadline + Self.leaseMargin,
            "leaseDuration (\(leaseDuration)) must be at least the APNs client's deadline (\(client.deadline)) + "
                + "\(Self.leaseMargin), or a slow send could lose its lease")
        try check(fcmRequestTimeout > .zero, "fcmRequestTimeout must be positive")
        try check(pollInterval > .zero && expirySweepInterval > .zero, "intervals must be positive")
        try check(shutdownGracePeriod >= .zero && appRefreshInterval >= .zero, "durations must not be negative")
        try check(
            nodeHeartbeatInterval > .zero && nodeStaleAfter >= nodeHeartbeatInterval * 2,
            "nodeHeartbeatInterval must be positive and nodeStaleAfter at least twice it (got \(nodeHeartbeatInterval), "
                + "\(nodeStaleAfter))")
        if let retention {
            try check(retention >= .seconds(86_400), "retention must be at least one day (got \(retention))")
        }
        try check((1...100).contains(jobRetry.maxAttempts), "jobRetry.maxAttempts must be 1...100 (got \(jobRetry.maxAttempts))")
        try check(
            jobRetry.initialBackoff >= .zero && jobRetry.maxBackoff >= jobRetry.initialBackoff && jobRetry.multiplier >= 1,
            "jobRetry backoffs must be ≥ 0, max ≥ initial, multiplier ≥ 1")
    }
}
