import Metrics
import SealedPushCore

/// The delivery workers' metrics, created through swift-metrics (the process bootstraps the backend, e.g.
/// Prometheus; tests pass their own factory).
///
/// - `sealedpush_gateway_sent_total`: jobs the provider (APNs or FCM) accepted.
/// - `sealedpush_gateway_failed_total{reason}`: jobs that ended without being sent: APNs's reason (`BadTopic`…),
///   the last transient reason when retries ran out, `Unregistered`/`BadDeviceToken`/`DeviceTokenNotForTopic`
///   for tokens that are gone, `Expired` for notifications past their ttl.
/// - `sealedpush_gateway_apns_requests_total`, `sealedpush_gateway_fcm_requests_total`: every request made to APNs,
///   to FCM (the clients' own retries included).
/// - `sealedpush_gateway_retries_total`: requests that failed transiently (429, 500, 503, GOAWAY, reset, connect
///   failure, timeout); each is followed by another attempt, by the client or by putting the job back, unless
///   attempts ran out.
/// - `sealedpush_gateway_apns_retries_total{reason}`: the same by reason (`TooManyRequests`,
///   `InternalServerError`, `ServiceUnavailable`, `NotProcessed`, `ConnectionLost`, `ConnectFailed`, `Timeout`;
///   see `APNsSendReport.transientFailures`); `sealedpush_gateway_fcm_retries_total{reason}` for FCM
///   (`quotaExceeded`, `unavailable`, `internal`, `connection`, `timeout`).
/// - `sealedpush_gateway_requeued_total`: jobs put back for a later claim.
/// - `sealedpush_gateway_send_seconds`: time of one send through a provider's client, its own retries included.
struct DeliveryMetrics: Sendable {
    static let sentLabel = "sealedpush_gateway_sent_total"
    static let failedLabel = "sealedpush_gateway_failed_total"
    static let requestsLabel = "sealedpush_gateway_apns_requests_total"
    static let retriesLabel = "sealedpush_gateway_retries_total"
    static let retriesByReasonLabel = "sealedpush_gateway_apns_retries_total"
    static let fcmRequestsLabel = "sealedpush_gateway_fcm_requests_total"
    static let fcmRetriesByReasonLabel = "sealedpush_gateway_fcm_retries_total"
    static let requeuedLabel = "sealedpush_gateway_requeued_total"
    static let sendSecondsLabel = "sealedpush_gateway_send_seconds"

    private let factory: any MetricsFactory
    private let sent: Counter
    private let requests: Counter
    private let fcmRequests: Counter
    private let retries: Counter
    private let requeued: Counter
    private let sendSeconds: Timer

    init(factory: any MetricsFactory) {
        self.factory = factory
        sent = Counter(label: Self.sentLabel, factory: factory)
        requests = Counter(label: Self.requestsLabel, factory: factory)
        fcmRequests = Counter(label: Self.fcmRequestsLabel, factory: factory)
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
    func record(_ delivery: ProviderDelivery, platform: PushPlatform) {
        if delivery.requests > 0 {
            (platform == .fcm ? fcmRequests : requests).increment(by: Int64(delivery.requests))
        }
        guard !delivery.transientReasons.isEmpty else { return }
        retries.increment(by: Int64(delivery.transientReasons.count))
        var byReason: [String: Int64] = [:]
        for reason in delivery.transientReasons { byReason[reason, default: 0] += 1 }
        let label = platform == .fcm ? Self.fcmRetriesByReasonLabel : Self.retriesByReasonLabel
        for (reason, count) in byReason {
            Counter(label: label, dimensions: [("reason", reason)], factory: factory).increment(by: count)
        }
    }

    func recordSend(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        sendSeconds.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    private func failed(_ reason: String) {
        Counter(label: Self.failedLabel, dimensions: [("reason", reason)], factory: factory).increment()
    }
}
