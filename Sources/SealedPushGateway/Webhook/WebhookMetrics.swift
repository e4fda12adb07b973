import Metrics

/// The webhook's metrics, created through swift-metrics (the process bootstraps the backend, e.g. Prometheus; tests
/// pass their own factory). `event` is the event type (`device.unregistered`, `notification.receipt`, else `other`).
///
/// - `sealedpush_gateway_webhook_events_total{event,outcome}`: events that ended, by outcome: `delivered` (a 2xx
///   answer), `failed` (attempts spent, a redirect, or a refusal), `dropped` (without an outbox only: the queue was
///   full, or the gateway stopped before it was delivered).
/// - `sealedpush_gateway_webhook_attempts_total{event,result}`: every `POST` made, by result: `2xx`, `3xx`, `4xx`,
///   `5xx` (the answer's class) or `error` (no answer: connection, TLS, timeout).
/// - `sealedpush_gateway_webhook_queue_events`: events held in memory (waiting, waiting for a retry, being posted),
///   set whenever it changes.
struct WebhookMetrics: Sendable {
    static let eventsLabel = "sealedpush_gateway_webhook_events_total"
    static let attemptsLabel = "sealedpush_gateway_webhook_attempts_total"
    static let queueLabel = "sealedpush_gateway_webhook_queue_events"

    /// How an event ended.
    enum Outcome: String, CaseIterable, Sendable {
        case delivered, failed, dropped
    }

    /// What one attempt got.
    enum AttemptResult: String, CaseIterable, Sendable {
        case success = "2xx", redirect = "3xx", clientError = "4xx", serverError = "5xx", error

        init(status: Int) {
            switch status {
            case 200..<300: self = .success
            case 300..<400: self = .redirect
            case 400..<500: self = .clientError
            case 500..<600: self = .serverError
            default: self = .error
            }
        }
    }

    private static let eventTypes = [UnregisteredWebhookConfiguration.eventType, ReceiptEvent.type, "other"]

    private let events: [String: [Outcome: Counter]]
    private let attempts: [String: [AttemptResult: Counter]]
    private let queue: Gauge

    init(factory: any MetricsFactory) {
        var events: [String: [Outcome: Counter]] = [:]
        var attempts: [String: [AttemptResult: Counter]] = [:]
        for type in Self.eventTypes {
            for outcome in Outcome.allCases {
                events[type, default: [:]][outcome] = Counter(
                    label: Self.eventsLabel, dimensions: [("event", type), ("outcome", outcome.rawValue)],
                    factory: factory)
            }
            for result in AttemptResult.allCases {
                attempts[type, default: [:]][result] = Counter(
                    label: Self.attemptsLabel, dimensions: [("event", type), ("result", result.rawValue)],
                    factory: factory)
            }
        }
        self.events = events
        self.attempts = attempts
        queue = Gauge(label: Self.queueLabel, factory: factory)
    }

    private static func label(_ type: String) -> String { eventTypes.contains(type) ? type : "other" }

    func record(_ outcome: Outcome, event type: String) {
        events[Self.label(type)]?[outcome]?.increment()
    }

    func recordAttempt(_ result: AttemptResult, event type: String) {
        attempts[Self.label(type)]?[result]?.increment()
    }

    func recordQueue(_ count: Int) {
        queue.record(count)
    }
}
