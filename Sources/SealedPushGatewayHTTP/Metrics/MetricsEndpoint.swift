import Hummingbird
import NIOCore

/// `GET /metrics`: the Prometheus text exposition of the gateway's registry, with the queue depth and webhook outbox
/// gauges refreshed from the store first. Served by the API (``GatewayHTTPServer``) or, with `metricsListen`, by
/// ``GatewayMetricsServer`` on an address of its own.
struct MetricsEndpoint: Sendable {
    let calls: StoreCalls
    let metrics: GatewayMetrics

    /// The exposition; a store that does not answer leaves the gauge as it was.
    func response() async -> Response {
        if let depth = try? await calls.run("queueDepth", { try await $0.queueDepth() }) {
            metrics.queueDepth.record(depth.total)
        }
        if let events = try? await calls.run("webhookOutboxDepth", { try await $0.webhookOutboxDepth() }) {
            metrics.webhookOutbox.record(events.waiting)
            metrics.webhookGivenUp.record(events.givenUp)
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.render())))
    }
}
