import ArgumentParser
import Logging
import SealedPushBlobServer
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushServer
import ServiceLifecycle

/// The services `serve` runs beside the HTTP API, sharing its store and metrics: the delivery worker, unless the
/// configuration turns it off.
///
/// ``GatewayServiceGroup`` starts them after the store and stops them after the HTTP server, so on SIGTERM the API
/// stops accepting first, then delivery finishes its sends in flight (within its grace period), then the store
/// closes.
enum GatewayExtraServices {
    /// The delivery configuration, checked (files included) before anything starts.
    /// - Throws: ``OperatorError`` naming the setting or file.
    static func deliveryConfiguration(_ configuration: GatewayConfiguration) throws -> DeliveryConfiguration? {
        do {
            return try configuration.deliveryConfiguration()
        } catch let error as GatewayConfigurationError {
            throw OperatorError(error.message)
        }
    }

    /// The webhook of a node that does not deliver (receipts are forwarded from there too), checked before anything
    /// starts.
    /// - Throws: ``OperatorError`` naming the setting or file.
    static func receiptWebhookConfiguration(_ configuration: GatewayConfiguration) throws -> UnregisteredWebhookConfiguration? {
        do {
            return try configuration.receiptWebhookConfiguration()
        } catch let error as GatewayConfigurationError {
            throw OperatorError(error.message)
        }
    }

    static func make(
        store: any GatewayStore, delivery: DeliveryConfiguration?, configuration: GatewayConfiguration, logger: Logger
    ) throws -> [any Service] {
        var services: [any Service] = []
        if let overflow = configuration.overflow, let (host, port) = try overflow.listenAddress() {
            let blobStore = try FileSystemBlobStore(directory: overflow.blobDirectory)
            var blobConfiguration = BlobServerConfiguration(
                host: host, port: port, expiry: .init(maxAge: .seconds(overflow.maxAgeSeconds)))
            blobConfiguration.maxConnections = 512
            var blobLogger = Logger(label: "sealed-push.gateway.blobs")
            blobLogger.logLevel = logger.logLevel
            let sweepLogger = blobLogger
            let server = BlobServer(store: blobStore, configuration: blobConfiguration) { result in
                switch result {
                case .success(let removed) where !removed.isEmpty:
                    sweepLogger.info("expired blobs removed", metadata: ["count": "\(removed.count)"])
                case .failure(let error): sweepLogger.warning("blob sweep failed", metadata: ["error": "\(error)"])
                default: break
                }
            }
            services.append(BlobServerService(server: server, logger: blobLogger))
        }
        guard let delivery else {
            logger.notice("delivery is off (delivery.enabled false or SEALEDPUSH_GATEWAY_DELIVERY=off): jobs stay queued")
            return services
        }
        var deliveryLogger = Logger(label: "sealed-push.gateway.delivery")
        deliveryLogger.logLevel = logger.logLevel
        logger.info(
            "delivery on",
            metadata: [
                "node": "\(delivery.nodeID)", "production": "\(delivery.productionEndpoint)",
                "sandbox": "\(delivery.sandboxEndpoint)", "maxConcurrentSends": "\(delivery.maxConcurrentSends)",
                "webhook": "\(delivery.webhook.map { $0.redactedURL } ?? "none")",
            ])
        services.append(try DeliveryService(store: store, configuration: delivery, logger: deliveryLogger))
        return services
    }
}
