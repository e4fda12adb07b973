import Logging
import SealedPushGateway
import ServiceLifecycle
import UnixSignals

/// The gateway's process: the store, any extra services (the delivery worker), and the HTTP server, in one
/// swift-service-lifecycle `ServiceGroup`.
///
/// Order is the shutdown order reversed: on SIGTERM or SIGINT the drain runs first (``DrainService``: `/healthz`
/// answers `503` while the listener still takes requests, for ``GatewayHTTPConfiguration/drain``), then the HTTP
/// server stops accepting and finishes its requests in flight (within ``GatewayHTTPConfiguration/requestGrace``),
/// then the extra services stop (last one first), then the store closes.
public enum GatewayServiceGroup {
    /// Builds the group.
    /// - Parameters:
    ///   - store: The gateway's store; closed after everything else has stopped.
    ///   - http: The HTTP API.
    ///   - extraServices: Services that share the store (for example the delivery worker); started after the
    ///     store and before the HTTP server, stopped after the HTTP server.
    ///   - signals: The signals that start a graceful shutdown.
    ///   - logger: The group's logger.
    /// - Returns: The group; `run()` it.
    public static func make(
        store: any GatewayStore, http: GatewayHTTPServer, extraServices: [any Service] = [],
        signals: [UnixSignal] = [.sigterm, .sigint], logger: Logger
    ) -> ServiceGroup {
        // The drain goes last, so it is the first to stop: `/healthz` turns 503 before the listener closes.
        let drain = DrainService(
            state: http.shutdownState, drain: http.configuration.drain, requestGrace: http.configuration.requestGrace,
            logger: logger)
        let services: [any Service] = [StoreLifecycleService(store: store)] + extraServices + [http, drain]
        return ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map {
                    ServiceGroupConfiguration.ServiceConfiguration(service: $0, serviceName: serviceName($0))
                },
                gracefulShutdownSignals: signals, logger: logger))
    }

    /// The name the group logs for a service: its type's name only. Without it, swift-service-lifecycle logs each
    /// service's reflected description (at `debug`, "Starting service lifecycle"), every stored property included:
    /// the process environment, the loaded configuration with its database URL (and any password in it), a store's
    /// connection settings — secrets that must not reach a log at any level.
    static func serviceName(_ service: any Service) -> String {
        String(describing: type(of: service))
    }
}
