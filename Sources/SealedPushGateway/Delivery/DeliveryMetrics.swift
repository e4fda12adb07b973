import Metrics
import SealedPushCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The delivery workers' metrics, created through swift-metrics (the process bootstraps the backend, e.g.
/// Prometheus; tests pass their own factory). Every one is labelled by `platform` (`apns` or `fcm`): the same
/// names, the same meaning on both.
///
/// - `sealedpush_gateway_sent_total{platform}`: jobs the provider accepted.
/// - `sealedpush_gateway_failed_total{platform,reason}`: jobs that ended without being sent: the provider's reason
///   (`BadTopic`, `invalidArgument`…), the last transient reason when retries ran out,
///   `Unregistered`/`BadDeviceToken`/`DeviceTokenNotForTopic` (APNs) or `unregistered`/`senderIdMismatch`/
///   `invalidToken` (FCM) for tokens that are gone, `Expired` for notifications past their ttl.
/// - `sealedpush_gateway_provider_requests_total{platform}`: every request made to the provider (the clients' own
///   retries included).
/// - `sealedpush_gateway_retries_total{platform,reason}`: requests that failed transiently, by reason; each is
///   followed by another attempt, by the client or by putting the job back, unless attempts ran out. APNs:
///   `TooManyRequests`, `InternalServerError`, `ServiceUnavailable`, `NotProcessed`, `ConnectionLost`,
///   `ConnectFailed`, `Timeout` (see `APNsSendReport.transientFailures`); FCM: `quotaExceeded`, `unavailable`,
///   `internal`, `connection`, `timeout`.
/// - `sealedpush_gateway_requeued_total{platform}`: jobs put back for a later claim.
/// - `sealedpush_gateway_jobs_started_total{platform,path}`: jobs the node started sending, by how they came:
///   `claim` (taken from the queue) or `handover` (committed leased to the node by its own HTTP API and handed over
///   without a claim, ``DeliveryService/reserve(jobs:)``).
/// - `sealedpush_gateway_send_seconds{platform}`: time of one send through a provider's client, its own retries
///   included.
/// - `sealedpush_gateway_delivery_seconds{platform}`: from the notification's acceptance (the `202`'s commit) to the
///   provider accepting the job, for every job sent: the time it queued, waited for retries and was sent (0 when
///   another node's clock put the acceptance after this node's now).
struct DeliveryMetrics: Sendable {
    static let sentLabel = "sealedpush_gateway_sent_total"
    static let failedLabel = "sealedpush_gateway_failed_total"
    static let requestsLabel = "sealedpush_gateway_provider_requests_total"
    static let retriesLabel = "sealedpush_gateway_retries_total"
    static let requeuedLabel = "sealedpush_gateway_requeued_total"
    static let sendSecondsLabel = "sealedpush_gateway_send_seconds"
    static let startedLabel = "sealedpush_gateway_jobs_started_total"
    static let deliverySecondsLabel = "sealedpush_gateway_delivery_seconds"

    /// How a job reached the delivery loop.
    enum StartPath {
        /// Claimed from the queue.
        case claim
        /// Handed over at enqueue.
        case handOver
    }

    /// The metrics of one platform.
    private struct PlatformMetrics: Sendable {
        let sent: Counter
        let requests: Counter
        let requeued: Counter
        let sendSeconds: Timer
        let deliverySeconds: Timer
        let claimed: Counter
        let handedOver: Counter

        init(_ platform: PushPlatform, factory: any MetricsFactory) {
            let dimensions = [("platform", platform.rawValue)]
            sent = Counter(label: DeliveryMetrics.sentLabel, dimensions: dimensions, factory: factory)
            requests = Counter(label: DeliveryMetrics.requestsLabel, dimensions: dimensions, factory: factory)
            requeued = Counter(label: DeliveryMetrics.requeuedLabel, dimensions: dimensions, factory: factory)
            sendSeconds = Timer(label: DeliveryMetrics.sendSecondsLabel, dimensions: dimensions, factory: factory)
            deliverySeconds = Timer(
                label: DeliveryMetrics.deliverySecondsLabel, dimensions: dimensions, factory: factory)
            claimed = Counter(
                label: DeliveryMetrics.startedLabel, dimensions: dimensions + [("path", "claim")], factory: factory)
            handedOver = Counter(
                label: DeliveryMetrics.startedLabel, dimensions: dimensions + [("path", "handover")], factory: factory)
        }
    }

    private let factory: any MetricsFactory
    private let apns: PlatformMetrics
    private let fcm: PlatformMetrics

    init(factory: any MetricsFactory) {
        self.factory = factory
        apns = PlatformMetrics(.apns, factory: factory)
        fcm = PlatformMetrics(.fcm, factory: factory)
        // The documented transient reasons are series at 0 from the start (a rate over a missing series is no data).
        for (platform, reasons) in Self.transientReasons {
            for reason in reasons {
                _ = Counter(
                    label: Self.retriesLabel, dimensions: [("platform", platform.rawValue), ("reason", reason)],
                    factory: factory)
            }
        }
    }

    /// The transient reasons the providers' clients report (``ProviderDelivery/transientReasons``), by platform.
    static let transientReasons: [(PushPlatform, [String])] = [
        (.apns, ["TooManyRequests", "InternalServerError", "ServiceUnavailable", "NotProcessed", "ConnectionLost",
                 "ConnectFailed", "Timeout"]),
        (.fcm, ["quotaExceeded", "unavailable", "internal", "connection", "timeout"]),
    ]

    private func metrics(_ platform: PushPlatform) -> PlatformMetrics {
        switch platform {
        case .apns: apns
        case .fcm: fcm
        }
    }

    /// Counts a job the loop starts sending.
    func recordStarted(_ path: StartPath, platform: PushPlatform) {
        switch path {
        case .claim: metrics(platform).claimed.increment()
        case .handOver: metrics(platform).handedOver.increment()
        }
    }

    /// Counts a finished job of `platform`.
    func record(_ outcome: JobOutcome, platform: PushPlatform) {
        switch outcome {
        case .sent: metrics(platform).sent.increment()
        case .retry: metrics(platform).requeued.increment()
        case .failed(let reason), .unregistered(let reason): failed(reason, platform: platform)
        case .expired: failed("Expired", platform: platform)
        }
    }

    /// Counts jobs the expiry sweep ended, by platform.
    func recordExpired(_ counts: [PushPlatform: Int]) {
        for (platform, count) in counts where count > 0 {
            failedCounter("Expired", platform: platform).increment(by: Int64(count))
        }
    }

    /// Counts one send's requests and its transient failures, by reason.
    func record(_ delivery: ProviderDelivery, platform: PushPlatform) {
        if delivery.requests > 0 { metrics(platform).requests.increment(by: Int64(delivery.requests)) }
        var byReason: [String: Int64] = [:]
        for reason in delivery.transientReasons { byReason[reason, default: 0] += 1 }
        for (reason, count) in byReason {
            Counter(
                label: Self.retriesLabel, dimensions: [("platform", platform.rawValue), ("reason", reason)],
                factory: factory
            ).increment(by: count)
        }
    }

    /// Records the duration of one send of `platform`.
    func recordSend(_ duration: Duration, platform: PushPlatform) {
        metrics(platform).sendSeconds.record(duration: duration)
    }

    /// Records how long a sent job took from its notification's acceptance until `sentAt`.
    func recordDelivered(acceptedAt: Date, sentAt: Date, platform: PushPlatform) {
        metrics(platform).deliverySeconds.record(duration: .seconds(max(0, sentAt.timeIntervalSince(acceptedAt))))
    }

    private func failed(_ reason: String, platform: PushPlatform) {
        failedCounter(reason, platform: platform).increment()
    }

    private func failedCounter(_ reason: String, platform: PushPlatform) -> Counter {
        Counter(label: Self.failedLabel, dimensions: [("platform", platform.rawValue), ("reason", reason)], factory: factory)
    }
}
