import ArgumentParser
import Logging
import SealedPushGateway
import SealedPushGatewayHTTP
import ServiceLifecycle

/// The services `serve` runs beside the HTTP API, sharing its store and metrics: the delivery worker, unless the
/// configuration turns it off.
///
/// ``GatewayServiceGroup`` starts them after the store and stops them after the HTTP server, so on SIGTERM the API
/// stops accepting first, then delivery finishes its sends in flight (within its grace period), then the store
/// closes.
enum GatewayExtraServices {
    /// The delivery configuration, checked (files included) before anything starts.
    /// - Throws: `ValidationError` naming the setting or file.
    static func deliveryConfiguration(_ configuration: GatewayConfiguration) throws -> DeliveryConfiguration? {
        do {
            return try configuration.deliveryConfiguration()
        } catch let error as GatewayConfigurationError {
            throw ValidationError(error.message)
        }
    }

    static func make(store: any GatewayStore, delivery: DeliveryConfiguration?, logger: Logger) throws -> [any Service] {
        guard let delivery else {
            logger.notice("delivery is off (delivery.enabled false or SEALEDPUSH_GATEWAY_DELIVERY=off): jobs stay queued")
            return []
        }
        var deliveryLogger = Logger(label: "sealed-push.gateway.delivery")
        deliveryLogger.logLevel = logger.logLevel
        logger.info(
            "delivery on",
            metadata: [
                "node": "\(delivery.nodeID)", "production": "\(delivery.productionEndpoint)",
                "sandbox": "\(delivery.sandboxEndpoint)", "maxConcurrentSends": "\(delivery.maxConcurrentSends)",
                "webhook": "\(delivery.webhook.map { $0.url.absoluteString } ?? "none")",
            ])
        return [try DeliveryService(store: store, configuration: delivery, logger: deliveryLogger)]
    }
}
