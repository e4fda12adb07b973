import Metrics
import SealedPushAPNs

/// The delivery workers' metrics, created through swift-metrics (the process bootstraps the backend, e.g.
/// Prometheus; tests pass their own factory).
///
/// - `sealedpush_gateway_sent_total`: jobs APNs accepted.
/// - `sealedpush_gateway_failed_total{reason}`: jobs that ended without being sent: APNs's reason (`BadTopic`…),
///   the last transient reason when retries ran out, `Unregistered`/`BadDeviceToken`/`DeviceTokenNotForTopic`
///   for tokens that are gone, `Expired` for notifications past their ttl.
/// - `sealedpush_gateway_apns_requests_total`: every request made to APNs (the client's own retries included).
/// - `sealedpush_gateway_retries_total`: requests that failed transiently (429, 500, 503, GOAWAY, reset, connect
///   failure, timeout); each is followed by another attempt, by the client or by putting the job back, unless
///   attempts ran out.
/// - `sealedpush_gateway_apns_retries_total{reason}`: the same by reason (`TooManyRequests`,
///   `InternalServerError`, `ServiceUnavailable`, `NotProcessed`, `ConnectionLost`, `ConnectFailed`, `Timeout`;
///   see `APNsSendReport.transientFailures`).
/// - `sealedpush_gateway_requeued_total`: jobs put back for a later claim.
/// - `sealedpush_gateway_send_seconds`: time of one send through the APNs client, its own retries included.
struct DeliveryMetrics: Sendable {
    static let sentLabel = "sealedpush_gateway_sent_total"
    static let failedLabel = "sealedpush_gateway_failed_total"
    static let requestsLabel = "sealedpush_gateway_apns_requests_total"
    static let retriesLabel = "sealedpush_gateway_retries_total"
    static let retriesByReasonLabel = "sealedpush_gateway_apns_retries_total"
    static let requeuedLabel = "sealedpush_gateway_requeued_total"
    static let sendSecondsLabel = "sealedpush_gateway_send_seconds"

    private let factory: any MetricsFactory
    private let sent: Counter
    private let requests: Counter
    private let retries: Counter
    private let requeued: Counter
    private let sendSeconds: Timer

    init(factory: any MetricsFactory) {
        self.factory = factory
        sent = Counter(label: Self.sentLabel, factory: factory)
        requests = Counter(label: Self.requestsLabel, factory: factory)
        retries = Counter(label: Self.retriesLabel, factory: factory)
        requeued = Counter(label: Self.requeuedLabel, factory: factory)
        sendSeconds = Timer(label: Self.sendSecondsLabel, factory: factory)
    }

    /// Counts a finished job.
    func record(_ outcome: JobOutcome) {
        switch outcome {
        case .sent: sent.increment()
        case .retry: requeued.increment()
        case .failed(let reason), .unregistered(let reason): failed(reason)
        case .expired: failed("Expired")
        }
    }

    /// Counts one send's requests and its transient failures, by reason.
    func record(_ report: APNsSendReport) {
        if report.attempts > 0 { requests.increment(by: Int64(report.attempts)) }
        guard !report.transientFailures.isEmpty else { return }
        retries.increment(by: Int64(report.transientFailures.count))
        var byReason: [String: Int64] = [:]
        for reason in report.transientFailures { byReason[reason, default: 0] += 1 }
        for (reason, count) in byReason {
            Counter(label: Self.retriesByReasonLabel, dimensions: [("reason", reason)], factory: factory)
                .increment(by: count)
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
