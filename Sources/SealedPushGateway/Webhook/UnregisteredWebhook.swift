import Foundation
import Logging
import Metrics

/// The gateway's webhook: posts ``WebhookEvent``s — ``UnregisteredDeviceEvent``s from delivery, ``ReceiptEvent``s from
/// the receipt endpoint — to the configured URL, signed, under the delivery policy described at
/// ``UnregisteredWebhookConfiguration`` (bounded retries with backoff and jitter or the receiver's `Retry-After`,
/// redirects and refusals never retried, up to ``UnregisteredWebhookConfiguration/maxConcurrent`` posts at once, a
/// bounded in-memory queue).
///
/// ``notify(_:)`` never waits: events are held (bounded) and ``run()`` posts them. Every event ends delivered, failed
/// (attempts spent, a redirect, a refusal) or dropped (the queue full, or stopped before delivery); the last two are
/// logged at `error` with the event's type, ids and reason, and all three are counted (``WebhookMetrics``). Logs never
/// carry the URL's credentials or query (``UnregisteredWebhookConfiguration/redactedURL``), nor an event's body.
public final class UnregisteredWebhook: Sendable {
    /// The configuration.
    public let configuration: UnregisteredWebhookConfiguration

    private let queue: WebhookQueue
    private let client: WebhookHTTPClient
    private let logger: Logger
    private let metrics: WebhookMetrics

    /// Creates a webhook sender.
    /// - Parameters:
    ///   - configuration: URL, secret, limits, trust roots.
    ///   - logger: Where failures are logged (ids and reason only).
    ///   - metricsFactory: Where its metrics go (the process's bootstrapped backend by default).
    /// - Throws: `SealedPushError` `invalidArgument` for limits out of range or trust roots without a certificate.
    public init(
        configuration: UnregisteredWebhookConfiguration, logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        self.queue = WebhookQueue(limit: configuration.queueLimit)
        self.client = try WebhookHTTPClient(configuration: configuration)
        self.metrics = WebhookMetrics(factory: metricsFactory)
    }

    /// Holds an event for ``run()``; returns at once. An event beyond the queue limit, or after ``finish()``, is
    /// dropped, logged at `error` and counted.
    public func notify(_ event: any WebhookEvent) {
        let deliveryID = UUID().uuidString.lowercased()
        switch queue.add(event, deliveryID: deliveryID) {
        case .success(let held):
            metrics.recordQueue(held)
        case .failure(let refusal):
            let reason =
                refusal == .full
                ? "the webhook queue is full (\(configuration.queueLimit) events held)" : "the gateway is stopping"
            giveUp(event, deliveryID: deliveryID, attempts: 0, reason: reason, outcome: .dropped)
        }
    }

    /// Accepts no more events; ``run()`` returns once the held ones are delivered or given up (retries then wait at
    /// most 250 ms).
    public func finish() { queue.close() }

    /// Posts held events, ``UnregisteredWebhookConfiguration/maxConcurrent`` at a time, until ``finish()`` and the
    /// queue is empty, or until cancelled: then every event still held is logged as dropped, with a count.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<configuration.maxConcurrent {
                group.addTask { await self.work() }
            }
        }
        let remaining = queue.takeRemaining()
        metrics.recordQueue(0)
        guard !remaining.isEmpty else { return }
        for item in remaining {
            giveUp(
                item.event, deliveryID: item.deliveryID, attempts: item.attempts,
                reason: "the gateway stopped before it was delivered", outcome: .dropped)
        }
        logger.error(
            "webhook events dropped at shutdown",
            metadata: ["dropped": "\(remaining.count)", "webhook": "\(configuration.redactedURL)"])
    }

    /// One worker: takes events and posts them until the queue is finished or the task cancelled.
    private func work() async {
        while let item = await queue.next() {
            var item = item
            item.attempts += 1
            switch await attempt(item.event, deliveryID: item.deliveryID, attempt: item.attempts) {
            case .delivered:
                queue.done(item)
                metrics.record(.delivered, event: item.event.eventType)
            case .failed(let problem, let final, let retryAfter):
                if final || item.attempts >= configuration.maxAttempts {
                    queue.done(item)
                    giveUp(item.event, deliveryID: item.deliveryID, attempts: item.attempts, reason: problem, outcome: .failed)
                } else {
                    queue.retry(
                        item,
                        after: configuration.retryWait(
                            afterFailures: item.attempts, retryAfter: retryAfter, random: .random(in: 0...1)))
                }
            case .cancelled:
                return  // left held: logged as dropped by run()
            }
            metrics.recordQueue(queue.count)
        }
    }

    /// Sends one event with retries, apart from the queue (waits between attempts as the queue does).
    /// - Parameter event: The event.
    /// - Returns: True when the receiver answered 2xx.
    @discardableResult
    public func deliver(_ event: any WebhookEvent) async -> Bool {
        let deliveryID = UUID().uuidString.lowercased()
        for number in 1...configuration.maxAttempts {
            switch await attempt(event, deliveryID: deliveryID, attempt: number) {
            case .delivered:
                metrics.record(.delivered, event: event.eventType)
                return true
            case .failed(let problem, let final, let retryAfter):
                if final || number == configuration.maxAttempts {
                    giveUp(event, deliveryID: deliveryID, attempts: number, reason: problem, outcome: .failed)
                    return false
                }
                let delay = configuration.retryWait(afterFailures: number, retryAfter: retryAfter, random: .random(in: 0...1))
                do { try await Task.sleep(for: delay) } catch {
                    giveUp(event, deliveryID: deliveryID, attempts: number, reason: "cancelled", outcome: .dropped)
                    return false
                }
            case .cancelled:
                giveUp(event, deliveryID: deliveryID, attempts: number, reason: "cancelled", outcome: .dropped)
                return false
            }
        }
        return false
    }

    /// How one attempt ended.
    private enum AttemptOutcome {
        case delivered
        /// Not delivered; `final` when retrying cannot help (a redirect, a refusal), `retryAfter` the wait the
        /// receiver asked for.
        case failed(String, final: Bool, retryAfter: Duration?)
        case cancelled
    }

    /// One signed `POST` of `event`.
    private func attempt(_ event: any WebhookEvent, deliveryID: String, attempt: Int) async -> AttemptOutcome {
        let body = event.jsonBody
        let timestamp = String(Int64(Date().timeIntervalSince1970))
        let headers = [
            ("Content-Type", "application/json"),
            (UnregisteredWebhookConfiguration.eventHeader, event.eventType),
            (UnregisteredWebhookConfiguration.deliveryHeader, deliveryID),
            (UnregisteredWebhookConfiguration.timestampHeader, timestamp),
            (UnregisteredWebhookConfiguration.signatureHeader, configuration.signature(timestamp: timestamp, body: body)),
        ]
        let outcome: AttemptOutcome
        do {
            let answer = try await client.post(headers: headers, body: body, timeout: configuration.requestTimeout)
            let status = answer.status
            metrics.recordAttempt(.init(status: status), event: event.eventType)
            switch status {
            case 200..<300:
                logger.debug(
                    "webhook delivered",
                    metadata: ["delivery": "\(deliveryID)", "event": "\(event.eventType)", "attempt": "\(attempt)"])
                return .delivered
            case 300..<400:
                outcome = .failed("HTTP \(status): redirects are not followed", final: true, retryAfter: nil)
            case _ where !answer.isRetryable:
                outcome = .failed(
                    "HTTP \(status): the receiver refused the event (a 4xx other than 408, 425 and 429 is not retried)",
                    final: true, retryAfter: nil)
            default:
                let asked = answer.retryAfter.map { ", Retry-After \($0)" } ?? ""
                outcome = .failed("HTTP \(status)\(asked)", final: false, retryAfter: answer.retryAfter)
            }
        } catch is CancellationError {
            return .cancelled
        } catch {
            if Task.isCancelled { return .cancelled }
            metrics.recordAttempt(.error, event: event.eventType)
            outcome = .failed("\(error)", final: false, retryAfter: nil)
        }
        if case .failed(let problem, _, _) = outcome {
            logger.notice(
                "webhook attempt failed",
                metadata: [
                    "delivery": "\(deliveryID)", "event": "\(event.eventType)", "attempt": "\(attempt)",
                    "problem": "\(problem)",
                ])
        }
        return outcome
    }

    /// Logs (at `error`) and counts an event that will not be delivered.
    private func giveUp(
        _ event: any WebhookEvent, deliveryID: String, attempts: Int, reason: String, outcome: WebhookMetrics.Outcome
    ) {
        metrics.record(outcome, event: event.eventType)
        var metadata: Logger.Metadata = [
            "event": "\(event.eventType)", "delivery": "\(deliveryID)", "attempts": "\(attempts)",
            "reason": "\(reason)",
        ]
        for (key, value) in event.logMetadata { metadata[key] = "\(value)" }
        logger.error(outcome == .dropped ? "webhook event dropped" : "webhook event given up", metadata: metadata)
    }
}
