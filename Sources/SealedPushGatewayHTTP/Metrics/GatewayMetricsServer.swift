import Hummingbird
import HummingbirdCore
import Logging
import SealedPushGateway
import ServiceLifecycle

/// `/metrics` on an address of its own (`metricsListen`), for Prometheus on a network only monitoring reaches:
/// the API's listener then answers `/metrics` with `404`, so whoever can reach the API (every backend, or the
/// internet behind TLS) no longer reads the gateway's counters, app ids among them. Plain HTTP, with the API's checks of
/// each request (``GatewayHTTP1Channel``); `HEAD /metrics` too; every other path is `404` with the contract's `Error`
/// object.
public struct GatewayMetricsServer: Service, CustomStringConvertible {
    private let host: String
    private let port: Int
    private let endpoint: MetricsEndpoint
    private let logger: Logger
    private let onListening: @Sendable (Int) async -> Void

    /// Creates the server.
    /// - Parameters:
    ///   - host: The address to listen on.
    ///   - port: The port (0: any free port, reported to `onListening`).
    ///   - store: The gateway's store (the queue depth gauge is read from it on each scrape).
    ///   - metrics: The registry the API and the delivery worker record into.
    ///   - logger: The server's logger.
    ///   - onListening: Called with the bound port once the server listens.
    public init(
        host: String, port: Int, store: any GatewayStore, metrics: GatewayMetrics,
        logger: Logger = Logger(label: "sealed-push.gateway.metrics"),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.host = host
        self.port = port
        self.endpoint = MetricsEndpoint(
            calls: StoreCalls(store: store, deadline: .seconds(2), logger: logger), metrics: metrics)
        self.logger = logger
        self.onListening = onListening
    }

    /// The listening address only (service groups log their services' descriptions).
    public var description: String { "GatewayMetricsServer(\(host):\(port))" }

    /// Listens and serves until graceful shutdown (or cancellation).
    public func run() async throws {
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        let endpoint = self.endpoint
        router.get("/metrics") { _, _ in await endpoint.response() }
        router.add(middleware: ErrorResponseMiddleware<BasicRequestContext>(notFound: "this is the gateway's metrics listener: it serves GET (and HEAD) /metrics only"))
        let onListening = self.onListening
        // The API's HTTP/1.1 channel: the same checks of each request head (one Host, HTTP/1.0's close, 501 for an
        // unknown method) and the contract's Error object for malformed HTTP.
        let server = HTTPServerBuilder { responder in GatewayHTTP1Channel(responder: responder, idleTimeout: .seconds(30)) }
        let application = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        do {
            try await application.run()
        } catch {
            throw ListenError.bind(error, listener: "/metrics (metricsListen)", host: host, port: port) ?? error
        }
    }
}
