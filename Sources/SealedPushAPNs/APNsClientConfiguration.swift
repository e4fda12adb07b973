import Foundation
import SealedPushCore

/// How an ``APNsClient`` connects, authenticates, limits itself and retries.
public struct APNsClientConfiguration: Sendable {
    /// Which certificates to trust.
    public enum TrustRoots: Sendable, Hashable {
        /// The system's roots (for Apple's servers).
        case system
        /// A PEM file of certificates (e.g. the emulator's `--cert-out`).
        case pemFile(String)
        /// PEM text of certificates.
        case pem(String)
    }

    /// The service.
    public var endpoint: APNsEndpoint
    /// Certificates to trust.
    public var trustRoots: TrustRoots
    /// The most connections, 1...64 (default 1). Requests are spread over up to this many: while requests are in
    /// flight and fewer are open, the missing ones open (once a request has succeeded on one), and each request
    /// goes to the least-loaded connection.
    public var maxConnections: Int
    /// Our own cap on concurrent streams per connection (default 1000); the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS is honoured when lower.
    public var maxConcurrentStreamsPerConnection: Int
    /// How long one request may wait for its answer (default 10 s). A request with no answer by then ends with
    /// reason `Timeout` (not retried: it may have been delivered).
    public var requestTimeout: Duration
    /// The most time one notification may take in all: waiting for a connection, attempts and backoff
    /// (default 60 s). Reaching it ends the notification with `Timeout` (or the last retryable failure).
    public var deadline: Duration
    /// The TCP + TLS connect timeout (default 10 s); through a ``proxy``, its answer to `CONNECT` too.
    public var connectTimeout: Duration
    /// An HTTP proxy to reach APNs through (`CONNECT`), or nil (default) to connect directly.
    public var proxy: ProviderProxy?
    /// Retries.
    public var retry: APNsRetryPolicy
    /// The provider token's renewal age, in [20, 60) minutes (default 50).
    public var tokenRenewalAge: TimeInterval
    /// The clock used for provider tokens (injectable for tests).
    public var clock: @Sendable () -> Date

    /// Creates a configuration with defaults.
    /// - Parameters:
    ///   - endpoint: The service (`.production`, `.sandbox`, or a host and port).
    ///   - trustRoots: Default `.system`.
    public init(endpoint: APNsEndpoint, trustRoots: TrustRoots = .system) {
        self.endpoint = endpoint
        self.trustRoots = trustRoots
        self.maxConnections = 1
        self.maxConcurrentStreamsPerConnection = 1000
        self.requestTimeout = .seconds(10)
        self.deadline = .seconds(60)
        self.connectTimeout = .seconds(10)
        self.proxy = nil
        self.retry = APNsRetryPolicy()
        self.tokenRenewalAge = 50 * 60
        self.clock = { Date() }
    }

    func validate() throws {
        func check(_ condition: Bool, _ message: String) throws {
            if !condition { throw SealedPushError(.invalidArgument, message) }
        }
        try check((1...64).contains(maxConnections), "maxConnections must be 1...64 (got \(maxConnections))")
        try check(
            (1...10_000).contains(maxConcurrentStreamsPerConnection),
            "maxConcurrentStreamsPerConnection must be 1...10000 (got \(maxConcurrentStreamsPerConnection))")
        try check((1...100).contains(retry.maxAttempts), "retry.maxAttempts must be 1...100 (got \(retry.maxAttempts))")
        try check(retry.multiplier >= 1 && retry.multiplier <= 10, "retry.multiplier must be 1...10")
        try check(
            retry.initialBackoff >= .zero && retry.maxBackoff >= retry.initialBackoff,
            "backoffs must be ≥ 0, max ≥ initial")
        try check(requestTimeout > .zero && deadline > .zero && connectTimeout > .zero, "timeouts must be positive")
        try check((1...65_535).contains(endpoint.port), "the port must be 1...65535")
    }
}
