import CoreMetrics
import Prometheus
import SealedPushCore
import SealedPushGateway

/// The gateway's metrics (swift-metrics) and their Prometheus text for `/metrics`.
///
/// Every part of the gateway — the HTTP API here, the delivery worker elsewhere — records through swift-metrics
/// under the names in ``Name``, so one registry exposes them all. The executable bootstraps the process-wide
/// `MetricsSystem` with a Prometheus factory once; tests pass their own registry to ``init(registry:)`` instead
/// (the global bootstrap can happen only once per process).
///
/// No label carries content, device tokens or keys: the labels are `platform` (`apns`, `fcm`) on every delivery
/// metric, `reason` (the provider's or the gateway's) on `sealedpush_gateway_failed_total` and
/// `sealedpush_gateway_retries_total`, the app id and limit on `sealedpush_gateway_rate_limited_total`, and the
/// route's pattern, method and status on the API's request metrics (`RequestMetricsMiddleware`), and the group
/// (`write`: `enqueue`, `finish`, `receipt`) on the store's group-commit metrics (``GroupCommitMetrics``). The
/// delivery worker creates its metrics (one series per platform) when it starts; a series family is either
/// labelled or not, so nothing here creates an unlabelled one under a delivery name.
public struct GatewayMetrics: Sendable {
    /// The metric names shared by the HTTP API and the delivery worker.
    public enum Name {
        /// Notifications accepted (committed, `202`, not counting idempotent replays). Counter.
        public static let accepted = "sealedpush_gateway_accepted_total"
        /// Bodies sealed (one per device of an accepted notification). Counter.
        public static let sealed = "sealedpush_gateway_sealed_total"
        /// Jobs the provider accepted, with dimension `platform`. Counter.
        public static let sent = "sealedpush_gateway_sent_total"
        /// Jobs that ended failed, with dimensions `platform` and `reason` (the provider's reason or the
        /// gateway's). Counter.
        public static let failed = "sealedpush_gateway_failed_total"
        /// Provider requests that failed transiently, with dimensions `platform` and `reason`. Counter.
        public static let retries = "sealedpush_gateway_retries_total"
        /// Every request made to a provider (the clients' own retries included), with dimension `platform`.
        /// Counter.
        public static let providerRequests = "sealedpush_gateway_provider_requests_total"
        /// Jobs put back for a later claim, with dimension `platform`. Counter.
        public static let requeued = "sealedpush_gateway_requeued_total"
        /// Jobs queued or claimed, refreshed from the store on each scrape. Gauge.
        public static let queueDepth = "sealedpush_gateway_queue_depth"
        /// Webhook events in the store's outbox (waiting or being posted by any node), refreshed from the store on
        /// each scrape. Gauge.
        public static let webhookOutbox = "sealedpush_gateway_webhook_outbox_events"
        /// Webhook events given up and kept in the outbox for the operator to send again, refreshed from the store on
        /// each scrape. Gauge.
        public static let webhookGivenUp = "sealedpush_gateway_webhook_given_up_events"
        /// Time to seal one body. Timer.
        public static let sealSeconds = "sealedpush_gateway_seal_seconds"
        /// Time of one send through a provider's client, its own retries included, with dimension `platform`.
        /// Timer.
        public static let sendSeconds = "sealedpush_gateway_send_seconds"
        /// The API's answers, with dimensions `route` (the route's pattern; `NotFound` for a path or a method no route
        /// has), `method` and `status`. Counter.
        public static let httpRequests = "sealedpush_gateway_http_requests_total"
        /// The API's time from a request's head to its answer, with dimensions `route` and `method`. Timer.
        public static let httpRequestSeconds = "sealedpush_gateway_http_request_seconds"
        /// From a notification's acceptance to the provider accepting a job of it, for every job sent, with
        /// dimension `platform`. Timer.
        public static let deliverySeconds = "sealedpush_gateway_delivery_seconds"
        /// Attachment plaintext bytes encrypted into the blob store (once per notification). Counter.
        public static let attachmentBytes = "sealedpush_gateway_attachment_bytes_total"
        /// Sends refused `429` by a rate limit, with dimensions `app` and `limit` (`sends`, `devices`). Counter.
        public static let rateLimited = "sealedpush_gateway_rate_limited_total"
        /// Sealed receipts recorded (`POST …/receipts`), with dimensions `outcome` (`decrypted`, `duplicate`,
        /// `fallback`) and `reason` (a fallback's reason code; `none` for the others). Counter.
        public static let receipts = "sealedpush_gateway_receipts_total"
        /// Receipts refused, with dimension `cause` (`malformed`, `unknownSender`, `unknownServerKey`, `notOpened`,
        /// `replayed`, `unknownMessage`, `limitReached`, `rateLimited`). Counter.
        public static let receiptsRefused = "sealedpush_gateway_receipts_refused_total"
        /// Notifications withdrawn (`DELETE …/notifications/{id}`, first call) and the jobs it ended, with dimension
        /// `what` (`notifications`, `jobs`). Counter.
        public static let withdrawn = "sealedpush_gateway_withdrawn_total"
        /// Always 1, with dimension `version` (``SealedPushVersion/current``): which release a node runs, for joins
        /// and alerts on a fleet mid-upgrade. Gauge.
        public static let buildInfo = "sealedpush_gateway_build_info"
    }

    /// The factory every metric here is made with.
    public let factory: any MetricsFactory
    /// Notifications accepted.
    public let accepted: CoreMetrics.Counter
    /// Bodies sealed.
    public let sealed: CoreMetrics.Counter
    /// Outstanding jobs.
    public let queueDepth: CoreMetrics.Gauge
    /// Webhook events in the outbox.
    public let webhookOutbox: CoreMetrics.Gauge
    /// Webhook events given up and kept.
    public let webhookGivenUp: CoreMetrics.Gauge
    /// Seal latency.
    public let sealSeconds: CoreMetrics.Timer
    /// Attachment bytes encrypted.
    public let attachmentBytes: CoreMetrics.Counter
    private let exposition: @Sendable () -> [UInt8]

    /// Creates the metrics on a factory, with the function that renders the exposition text.
    /// - Parameters:
    ///   - factory: Where the metrics are made (for the process-wide system: `MetricsSystem.factory`).
    ///   - exposition: The Prometheus text of everything the factory holds (for example `registry.emitToBuffer`).
    public init(factory: any MetricsFactory, exposition: @escaping @Sendable () -> [UInt8]) {
        self.factory = factory
        self.exposition = exposition
        accepted = CoreMetrics.Counter(label: Name.accepted, factory: factory)
        sealed = CoreMetrics.Counter(label: Name.sealed, factory: factory)
        queueDepth = CoreMetrics.Gauge(label: Name.queueDepth, factory: factory)
        webhookOutbox = CoreMetrics.Gauge(label: Name.webhookOutbox, factory: factory)
        webhookGivenUp = CoreMetrics.Gauge(label: Name.webhookGivenUp, factory: factory)
        sealSeconds = CoreMetrics.Timer(label: Name.sealSeconds, factory: factory)
        attachmentBytes = CoreMetrics.Counter(label: Name.attachmentBytes, factory: factory)
        // The series whose label values are known in advance, at 0 before their first event (Prometheus'
        // instrumentation practices: a rate over a missing series is no data, not 0).
        for cause in Self.receiptRefusalCauses {
            _ = CoreMetrics.Counter(label: Name.receiptsRefused, dimensions: [("cause", cause)], factory: factory)
        }
        for outcome in ["decrypted", "duplicate"] {
            _ = CoreMetrics.Counter(
                label: Name.receipts, dimensions: [("outcome", outcome), ("reason", "none")], factory: factory)
        }
        CoreMetrics.Gauge(label: Name.buildInfo, dimensions: [("version", SealedPushVersion.current)], factory: factory)
            .record(1)
        for what in ["notifications", "jobs"] {
            _ = CoreMetrics.Counter(label: Name.withdrawn, dimensions: [("what", what)], factory: factory)
        }
    }

    /// Creates the metrics in a Prometheus registry of their own (tests; or a gateway that does not bootstrap the
    /// process-wide system).
    /// - Parameter registry: The registry `/metrics` renders.
    public init(registry: PrometheusCollectorRegistry) {
        self.init(factory: Self.prometheusFactory(registry: registry), exposition: { registry.emitToBuffer() })
    }

    /// A Prometheus factory for `registry` with histogram buckets that fit the gateway's timers: sealing takes
    /// tens of microseconds, a send to APNs milliseconds to seconds.
    /// - Parameter registry: The registry the metrics go to.
    /// - Returns: The factory (bootstrap the process-wide `MetricsSystem` with it, once).
    public static func prometheusFactory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[Name.sealSeconds] = [
            .microseconds(25), .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(50),
        ]
        factory.durationHistogramBuckets[Name.sendSeconds] = [
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10), .seconds(30),
        ]
        factory.durationHistogramBuckets[Name.httpRequestSeconds] = [
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
            .seconds(5), .seconds(10),
        ]
        // A group commit's items (1 under light load, up to 64 sends or 128 job ends) and its write's time.
        factory.valueHistogramBuckets[GroupCommitMetrics.batchSizeLabel] = [1, 2, 4, 8, 16, 32, 64, 128]
        factory.durationHistogramBuckets[GroupCommitMetrics.writeSecondsLabel] = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(5),
        ]
        // Milliseconds when the queue is short, up to hours when a job waits out retries or a backlog.
        factory.durationHistogramBuckets[Name.deliverySeconds] = [
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10), .seconds(30), .seconds(60),
            .seconds(300), .seconds(900), .seconds(3600),
        ]
        return factory
    }

    /// The Prometheus text exposition of every metric in the factory, each family with its `# HELP` line
    /// (``MetricHelp``), then the standard process metrics (``ProcessMetrics``).
    public func render() -> [UInt8] { MetricHelp.adding(to: exposition()) + Array(ProcessMetrics.exposition().utf8) }

    /// The causes a receipt is refused for (`sealedpush_gateway_receipts_refused_total{cause}`), each a series from
    /// the start.
    static let receiptRefusalCauses = [
        "malformed", "unknownSender", "unknownServerKey", "notOpened", "replayed", "unknownMessage", "limitReached",
        "rateLimited",
    ]

    /// Counts a receipt recorded, by outcome and reason: a reason outside the reference step's codes
    /// (``DeliveryReceipt/referenceReasonCodes``) counts as `other`, so devices cannot add series without bound.
    func recordReceipt(outcome: String, reason: String?) {
        let label = reason.map { DeliveryReceipt.referenceReasonCodes.contains($0) ? $0 : "other" } ?? "none"
        CoreMetrics.Counter(label: Name.receipts, dimensions: [("outcome", outcome), ("reason", label)], factory: factory)
            .increment()
    }

    /// Counts a receipt refused.
    func recordReceiptRefused(cause: String) {
        CoreMetrics.Counter(label: Name.receiptsRefused, dimensions: [("cause", cause)], factory: factory).increment()
    }

    /// Counts a withdrawal and the jobs it ended.
    func recordWithdrawal(jobs: Int) {
        CoreMetrics.Counter(label: Name.withdrawn, dimensions: [("what", "notifications")], factory: factory).increment()
        CoreMetrics.Counter(label: Name.withdrawn, dimensions: [("what", "jobs")], factory: factory).increment(by: jobs)
    }

    /// Counts a send refused by a rate limit.
    func recordRateLimited(appID: String, limit: String) {
        CoreMetrics.Counter(label: Name.rateLimited, dimensions: [("app", appID), ("limit", limit)], factory: factory)
            .increment()
    }
}
