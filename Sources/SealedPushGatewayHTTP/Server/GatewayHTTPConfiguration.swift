/// How the gateway's HTTP server listens and what it accepts.
public struct GatewayHTTPConfiguration: Sendable, Hashable {
    /// The default largest request body: 262,144 bytes (the contract's default `maxBodyBytes`).
    public static let defaultMaxBodyBytes = 262_144

    /// The address to listen on (`127.0.0.1` by default: put a TLS proxy in front for other hosts).
    public var host: String
    /// The port; 0 picks a free one (reported by ``GatewayHTTPServer``'s `onListening`).
    public var port: Int
    /// Request bodies over this get `413 requestTooLarge`.
    public var maxBodyBytes: Int
    /// How long one store call may take before the request gets `503 unavailable`.
    public var storeDeadline: Duration
    /// How long `/healthz` waits for the database's ping.
    public var healthDeadline: Duration
    /// A connection that sends nothing (no request, no body bytes) for this long is closed.
    public var idleTimeout: Duration
    /// Per-app limits on sends and the devices they reach (none by default).
    public var rateLimits: RateLimits
    /// Whether the API answers `/metrics` (false when ``GatewayMetricsServer`` serves it on an address of its own:
    /// the API then answers `404`).
    public var metricsOnAPI: Bool
    /// At a graceful stop, how long `/healthz` answers `503` (`stopping`) while the listener still takes requests,
    /// so a load balancer stops sending new ones before connections are refused (0: the listener closes at once).
    public var drain: Duration = .zero
    /// At a graceful stop, how long requests already in flight (a body still arriving included) may take once the
    /// listener is closed; connections still open then are closed.
    public var requestGrace: Duration = .seconds(20)

    /// Creates a configuration.
    /// - Parameters:
    ///   - host: The listening address.
    ///   - port: The listening port (0: any free port).
    ///   - maxBodyBytes: The largest request body.
    ///   - storeDeadline: The deadline of each store call.
    ///   - healthDeadline: The deadline of the readiness ping.
    ///   - idleTimeout: How long an idle connection stays open.
    ///   - rateLimits: Per-app send limits.
    ///   - metricsOnAPI: Whether the API answers `/metrics`.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, maxBodyBytes: Int = GatewayHTTPConfiguration.defaultMaxBodyBytes,
        storeDeadline: Duration = .seconds(10), healthDeadline: Duration = .seconds(2), idleTimeout: Duration = .seconds(30),
        rateLimits: RateLimits = RateLimits(), metricsOnAPI: Bool = true
    ) {
        self.rateLimits = rateLimits
        self.metricsOnAPI = metricsOnAPI
        self.host = host
        self.port = port
        self.maxBodyBytes = maxBodyBytes
        self.storeDeadline = storeDeadline
        self.healthDeadline = healthDeadline
        self.idleTimeout = idleTimeout
    }
}
