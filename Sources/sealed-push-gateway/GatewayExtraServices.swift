import Logging
import SealedPushGateway
import SealedPushGatewayHTTP
import ServiceLifecycle

/// The services `serve` runs beside the HTTP API, sharing its store and metrics.
///
/// This is where the delivery worker (claiming jobs, sending through `SealedPushAPNs`) is added: return it here
/// and ``GatewayServiceGroup`` starts it after the store and stops it after the HTTP server.
enum GatewayExtraServices {
    static func make(
        store: any GatewayStore, metrics: GatewayMetrics, configuration: GatewayConfiguration, logger: Logger
    ) throws -> [any Service] {
        []
    }
}
