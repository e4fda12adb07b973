import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import ServiceLifecycle

/// `sealed-push-gateway serve`: the HTTP API and the delivery workers until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the gateway until SIGTERM or SIGINT (graceful: stop accepting, finish requests and APNs sends in flight, close the store).",
        discussion: """
            Environment overrides: SEALEDPUSH_GATEWAY_LISTEN (host:port), SEALEDPUSH_GATEWAY_METRICS_LISTEN (host:port \
            where /metrics is served instead of on the API), SEALEDPUSH_GATEWAY_DATABASE (sqlite:PATH or \
            postgres://…), SEALEDPUSH_GATEWAY_MAX_BODY_BYTES, SEALEDPUSH_GATEWAY_LOG_LEVEL, SEALEDPUSH_GATEWAY_LOG_FORMAT (text|json), SEALEDPUSH_GATEWAY_BLOB_DIR \
            with SEALEDPUSH_GATEWAY_BLOB_URL_PREFIX (the blob store: content by reference, attachments), \
            SEALEDPUSH_GATEWAY_BLOB_LISTEN (host:port where serve serves it); delivery: SEALEDPUSH_GATEWAY_DELIVERY \
            (on|off), SEALEDPUSH_GATEWAY_NODE_ID, SEALEDPUSH_GATEWAY_APNS_PRODUCTION_URL, \
            SEALEDPUSH_GATEWAY_APNS_SANDBOX_URL, SEALEDPUSH_GATEWAY_APNS_TRUST_ROOTS (PEM file), SEALEDPUSH_GATEWAY_FCM_URL, \
            SEALEDPUSH_GATEWAY_FCM_TRUST (PEM file), \
            SEALEDPUSH_GATEWAY_WEBHOOK_URL with SEALEDPUSH_GATEWAY_WEBHOOK_SECRET_FILE. Relative paths resolve against \
            the configuration file's directory.
            """)

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    func run() async throws {
        // Files this process creates (the SQLite database and its WAL: tokens, key digests, sealed bodies) are
        // the operator's only.
        umask(0o077)
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(path: config, environment: ProcessInfo.processInfo.environment)
        } catch let error as GatewayConfigurationError {
            throw OperatorError(error.message)
        }
        let delivery = try GatewayExtraServices.deliveryConfiguration(configuration)
        let receiptHook = try GatewayExtraServices.receiptWebhookConfiguration(configuration)
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        if configuration.logFormat == "json" {
            LoggingSystem.bootstrap { JSONLogHandler.standardError(label: $0, level: level) }
        } else {
            LoggingSystem.bootstrap { GatewayLogHandler.standardError(label: $0, level: level) }
        }
        let logger = Logger(label: "sealed-push.gateway")
        logger.info("sealed-push-gateway starting", metadata: ["version": "\(SealedPushVersion.current)"])
        if configuration.plainHTTPBeyondLoopback {
            logger.warning(
                "plain HTTP beyond loopback (allowPlainHTTP): API keys cross the network in clear unless a TLS proxy or a private network protects this listener",
                metadata: ["listen": "\(configuration.listen)"])
        } else if configuration.allowPlainHTTP, configuration.delivery.webhook != nil {
            logger.warning("allowPlainHTTP is set: the webhook URL may be plain http://")
        }

        // HTTPS: the certificate and key are checked before anything else starts (a bad pair stops here).
        // A certificate expired or not yet valid stops here too (clients would refuse it); one that expires within
        // GatewayTLSContext.expiryWarningDays is warned about, here and at each reload.
        let tls: GatewayTLSContext?
        do {
            tls = try configuration.tls.map { try GatewayTLSContext(settings: $0, logger: logger) }
        } catch let error as GatewayConfigurationError {
            throw OperatorError(error.message)
        }
        if let tls {
            logger.info("serving HTTPS; SIGHUP reloads the certificate", metadata: ["certificate": "\(tls.summary)"])
        }

        // The process-wide metrics system: the HTTP API and the delivery worker record into one registry.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(GatewayMetrics.prometheusFactory(registry: registry))
        let metrics = GatewayMetrics(factory: MetricsSystem.factory, exposition: { registry.emitToBuffer() })

        // Only `init` creates a database: a missing file (a mistyped path, a database deleted or moved away) is refused.
        let store: any GatewayStore
        do {
            store = try configuration.openStore(logger: Logger(label: "sealed-push.gateway.db"))
        } catch let error as GatewayStoreError {
            throw OperatorError("\(error.message) (`database` in \(config))")
        }
        let applied = try await store.migrate()
        logger.info("database ready", metadata: ["migrationsApplied": "\(applied)"])

        var extra = try GatewayExtraServices.make(
            store: store, delivery: delivery, configuration: configuration, logger: logger)
        // The delivery service's webhook also forwards receipts from the API; a node that does not deliver runs its
        // own for them.
        var webhook = extra.lazy.compactMap { ($0 as? DeliveryService)?.webhook }.first
        if webhook == nil, let hook = receiptHook {
            var webhookLogger = Logger(label: "sealed-push.gateway.webhook")
            webhookLogger.logLevel = logger.logLevel
            // Its own lease owner: not a node id's (`nodeID/…`), which a delivering node's start would take back.
            let owner = "receipts:" + ProcessInfo.processInfo.hostName + "/" + UUID().lowercasedString
            let own = try UnregisteredWebhook(
                configuration: hook, logger: webhookLogger, outbox: WebhookOutbox(store: store, owner: owner))
            extra.append(WebhookService(webhook: own))
            logger.info("receipts are forwarded to the webhook", metadata: ["webhook": "\(hook.redactedURL)"])
            webhook = own
        }
        let deliveryService = extra.lazy.compactMap { $0 as? DeliveryService }.first  // at most one
        let http = GatewayHTTPServer(
            configuration: try configuration.httpConfiguration(), store: store, metrics: metrics,
            overflow: try configuration.overflowConfiguration(), logger: logger, tls: tls, webhook: webhook,
            delivery: deliveryService,
            onListening: { port in
                logger.info("listening", metadata: ["port": "\(port)"])
                // One line on standard output (unbuffered), for scripts and tests that asked for port 0.
                FileHandle.standardOutput.write(Data("listening on port \(port)\n".utf8))
            })
        // SIGHUP: the certificate and the rate limits are read again.
        extra.append(
            ReloadService(
                tls: tls, configurationPath: config, environment: ProcessInfo.processInfo.environment,
                loaded: configuration, server: http, logger: logger))
        if let (host, port) = try configuration.metricsListenAddress() {
            extra.append(
                GatewayMetricsServer(
                    host: host, port: port, store: store, metrics: metrics,
                    onListening: { port in
                        logger.info("metrics listening", metadata: ["port": "\(port)"])
                        FileHandle.standardOutput.write(Data("metrics listening on port \(port)\n".utf8))
                    }))
        }
        // Delivery takes its node id before anything listens: a second live process with the same node id stops here.
        for case let delivery as DeliveryService in extra { try await delivery.start() }
        let group = GatewayServiceGroup.make(store: store, http: http, extraServices: extra, logger: logger)
        try await group.run()
        logger.info("stopped")
    }
}
