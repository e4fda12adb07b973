import Metrics

/// The delivery workers' metrics, created through swift-metrics (the process bootstraps the backend, e.g.
/// Prometheus; tests pass their own factory).
///
/// - `sealedpush_gateway_sent_total`: jobs APNs accepted.
/// - `sealedpush_gateway_failed_total{reason}`: jobs that ended without being sent: APNs's reason (`BadTopic`…),
///   the last transient reason when retries ran out, `Unregistered`/`BadDeviceToken`/`DeviceTokenNotForTopic`
///   for tokens that are gone, `Expired` for notifications past their ttl.
/// - `sealedpush_gateway_retries_total`: jobs put back for a later attempt.
/// - `sealedpush_gateway_send_seconds`: time of one send through the APNs client, its own retries included.
struct DeliveryMetrics: Sendable {
    static let sentLabel = "sealedpush_gateway_sent_total"
    static let failedLabel = "sealedpush_gateway_failed_total"
    static let retriesLabel = "sealedpush_gateway_retries_total"
    static let sendSecondsLabel = "sealedpush_gateway_send_seconds"

    private let factory: any MetricsFactory
    private let sent: Counter
    private let retries: Counter
    private let sendSeconds: Timer

    init(factory: any MetricsFactory) {
        self.factory = factory
        sent = Counter(label: Self.sentLabel, factory: factory)
        retries = Counter(label: Self.retriesLabel, factory: factory)
        sendSeconds = Timer(label: Self.sendSecondsLabel, factory: factory)
    }

    /// Counts a finished job.
    func record(_ outcome: JobOutcome) {
        switch outcome {
        case .sent: sent.increment()
        case .retry: retries.increment()
        case .failed(let reason), .unregistered(let reason): failed(reason)
        case .expired: failed("Expired")
        }
    }

    /// Records one send's duration.
    func recordSend(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        sendSeconds.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    private func failed(_ reason: String) {
        Counter(label: Self.failedLabel, dimensions: [("reason", reason)], factory: factory).increment()
    }
}
