import Foundation
import Logging
import Metrics

/// The gateway's webhook: posts ``WebhookEvent``s — ``UnregisteredDeviceEvent``s from delivery, ``ReceiptEvent``s from
/// the receipt endpoint — to the configured URL, signed, under the delivery policy described at
/// ``UnregisteredWebhookConfiguration`` (bounded retries with backoff and jitter or the receiver's `Retry-After`,
/// redirects and refusals never retried, up to ``UnregisteredWebhookConfiguration/maxConcurrent`` posts at once, at
/// most ``UnregisteredWebhookConfiguration/queueLimit`` events held in memory).
///
/// Events come from one of two places:
/// - **A ``WebhookOutbox``** (what the gateway's delivery service and `serve` use): the store's transaction that makes
///   an event true writes it (``JobFinish/webhookEvent``, ``ReceivedReceipt/forwardsToWebhook``), the producer calls
///   ``outboxWritten()``, and ``run()`` claims events from the store under a lease as it has room for them, deleting
///   each once it ends. An event survives a crash (its lease expires, or the node's next incarnation takes it back at
///   start), a receiver down for a long time (it waits in the store, not in memory) and a stop (what is not delivered
///   by then goes back to the outbox): none is dropped. Each failed attempt is counted in the outbox as it happens, so
///   an event's `maxAttempts` hold across nodes, stops and crashes. Delivery is at least once — a crash
///   between a receiver's `2xx` and the row's deletion posts it again, with the same `SealedPush-Delivery` id.
/// - **``notify(_:)``** (without an outbox): never waits; events are held in memory (bounded) and ``run()`` posts
///   them; one beyond the queue's limit, or still held when the process stops, is dropped.
///
/// Every event ends delivered, failed (attempts spent, a redirect, a refusal) or — in memory only — dropped; the last
/// two are logged at `error` with the event's type, ids and reason, and all three are counted (``WebhookMetrics``).
/// Logs never carry the URL's credentials or query (``UnregisteredWebhookConfiguration/redactedURL``), nor an event's
/// body.
public final class UnregisteredWebhook: Sendable {
    /// The configuration.
    public let configuration: UnregisteredWebhookConfiguration

    /// Where events come from when durable; nil: ``notify(_:)``.
    public let outbox: WebhookOutbox?

    private let queue: WebhookQueue
    private let client: WebhookHTTPClient
    private let logger: Logger
    private let metrics: WebhookMetrics
    private let wakeUp = WebhookWakeUp()

    /// Creates a webhook sender.
    /// - Parameters:
    ///   - configuration: URL, secret, limits, trust roots.
    ///   - logger: Where failures are logged (ids and reason only).
    ///   - metricsFactory: Where its metrics go (the process's bootstrapped backend by default).
    ///   - outbox: The store's outbox to take events from; nil: events come from ``notify(_:)`` and are held in
    ///     memory.
    /// - Throws: `SealedPushError` `invalidArgument` for limits out of range or trust roots without a certificate.
    public init(
        configuration: UnregisteredWebhookConfiguration, logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory, outbox: WebhookOutbox? = nil
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.outbox = outbox
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

    /// Whether events come from the store's outbox (``outbox``): producers write them there, then call
    /// ``outboxWritten()``, instead of ``notify(_:)``.
    public var usesOutbox: Bool { outbox != nil }

    /// Events were written to the outbox: ``run()`` claims them now rather than at its next look.
    public func outboxWritten() { wakeUp.wake() }

    /// Accepts no more events (and claims none from the outbox); ``run()`` returns once the held ones are delivered,
    /// given up or — outbox events, after one more attempt — given back to the outbox (other retries then wait at most
    /// 250 ms).
    public func finish() {
        queue.close()
        wakeUp.wake()
    }

    /// Posts events, ``UnregisteredWebhookConfiguration/maxConcurrent`` at a time — claimed from the outbox as there is
    /// room, or held by ``notify(_:)`` — until ``finish()`` and nothing is held, or until cancelled. Then every outbox
    /// event still held goes back to the outbox with its attempts (another node, or this one's next start, goes on
    /// with it); every other event still held is logged as dropped, with a count.
    public func run() async {
        await withTaskGroup(of: Bool.self) { group in  // true: a worker
            if let outbox {
                group.addTask {
                    await self.claimFromOutbox(outbox)
                    return false
                }
            }
            for _ in 0..<configuration.maxConcurrent {
                group.addTask {
                    await self.work()
                    return true
                }
            }
            // The workers end once finished and nothing is held (or when cancelled); then the outbox reader too.
            var workers = configuration.maxConcurrent
            while workers > 0, let worker = await group.next() {
                if worker { workers -= 1 }
            }
            group.cancelAll()
        }
        var remaining = queue.takeRemaining()
        metrics.recordQueue(0)
        if let outbox {
            let stored = remaining.compactMap { item in
                (item.event as? StoredWebhookEvent).map { ($0, item.attempts) }
            }
            remaining.removeAll { $0.event is StoredWebhookEvent }
            if !stored.isEmpty { await giveBack(stored, to: outbox) }
        }
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

    /// Claims outbox events while the queue has room, keeps the leases of those held, and waits to be woken (an
    /// event written, a worker free) or for ``WebhookOutbox/pollInterval``; until ``finish()`` or cancellation.
    private func claimFromOutbox(_ outbox: WebhookOutbox) async {
        let clock = ContinuousClock()
        var renewed = clock.now
        while !Task.isCancelled {
            let room = queue.room
            if room == 0, queue.isClosed { return }
            if renewed.duration(to: clock.now) >= outbox.leaseDuration / 3 {
                renewed = clock.now
                do {
                    _ = try await outbox.store.renewWebhookEvents(
                        owner: outbox.owner, leaseDuration: outbox.leaseDuration, now: Date())
                } catch {
                    logger.warning("renewing the webhook events' leases failed", metadata: ["error": "\(error)"])
                }
            }
            var more = false
            if room > 0 {
                let limit = min(room, outbox.claimLimit)
                do {
                    let events = try await outbox.store.claimWebhookEvents(
                        owner: outbox.owner, limit: limit, leaseDuration: outbox.leaseDuration, now: Date())
                    var refused: [(StoredWebhookEvent, Int)] = []
                    for event in events {
                        switch queue.add(event, deliveryID: event.deliveryID, attempts: event.attempts) {
                        case .success(let held): metrics.recordQueue(held)
                        case .failure: refused.append((event, event.attempts))  // finished meanwhile
                        }
                    }
                    if !refused.isEmpty { await giveBack(refused, to: outbox) }
                    more = events.count == limit
                } catch {
                    logger.warning("claiming webhook events failed", metadata: ["error": "\(error)"])
                }
            }
            if !more { await wakeUp.wait(upTo: outbox.pollInterval) }
        }
    }

    /// Puts held outbox events back (the webhook is stopping), with the attempts made; waits for the store even when
    /// the calling task was cancelled.
    private func giveBack(_ events: [(StoredWebhookEvent, Int)], to outbox: WebhookOutbox) async {
        let logger = self.logger
        let released = await Task {
            var count = 0
            for (event, attempts) in events {
                do {
                    if try await outbox.store.releaseWebhookEvent(id: event.id, owner: outbox.owner, attempts: attempts) {
                        count += 1
                    }
                } catch {
                    // Its lease expires instead: another node (or this one's next start) takes it then.
                    logger.warning(
                        "giving a webhook event back to the outbox failed",
                        metadata: ["outbox": "\(event.id)", "error": "\(error)"])
                }
            }
            return count
        }.value
        logger.notice(
            "webhook events left in the outbox for later",
            metadata: ["events": "\(events.count)", "released": "\(released)", "webhook": "\(configuration.redactedURL)"])
    }

    /// Writes a held outbox event's attempts after a failed one (before its retry, or its give-back at a stop), so that
    /// a crash, or a stop that cannot give it back, costs none of them.
    /// - Returns: False only when the store says this node no longer holds it (its lease expired and another node
    ///   took it); true when written, or when the write failed (the lease still runs: this node goes on with it).
    private func attemptsRecorded(_ event: StoredWebhookEvent, attempts: Int, in outbox: WebhookOutbox) async -> Bool {
        do {
            if try await outbox.store.recordWebhookAttempts(id: event.id, owner: outbox.owner, attempts: attempts) {
                return true
            }
            logger.warning(
                "a webhook event's lease was lost while it was retried: the node holding it now goes on with it",
                metadata: ["outbox": "\(event.id)", "attempts": "\(attempts)"])
            return false
        } catch {
            logger.warning(
                "recording a webhook event's attempts failed: a crash before the next one would repeat them",
                metadata: ["outbox": "\(event.id)", "attempts": "\(attempts)", "error": "\(error)"])
            return true
        }
    }

    /// An event ended: out of the queue; when it came from the outbox, deleted there once delivered, or kept there as
    /// given up (with `givenUp`, the last failure) for the operator to send again.
    private func ended(_ item: WebhookQueue.Item, givenUp failure: String? = nil) async {
        queue.done(item)
        guard let outbox, let event = item.event as? StoredWebhookEvent else { return }
        wakeUp.wake()  // room for another
        do {
            let held =
                if let failure {
                    try await outbox.store.giveUpWebhookEvent(
                        id: event.id, owner: outbox.owner, attempts: item.attempts,
                        failure: failure, now: Date())
                } else {
                    try await outbox.store.endWebhookEvent(id: event.id, owner: outbox.owner)
                }
            if !held {
                logger.warning(
                    "a webhook event's lease was lost before it ended: another node may post it again",
                    metadata: ["outbox": "\(event.id)", "delivery": "\(item.deliveryID)"])
            }
        } catch {
            logger.warning(
                "recording an ended webhook event failed: it is posted again when its lease expires",
                metadata: ["outbox": "\(event.id)", "delivery": "\(item.deliveryID)", "error": "\(error)"])
        }
    }

    /// One worker: takes events and posts them until the queue is finished or the task cancelled.
    private func work() async {
        while let item = await queue.next() {
            var item = item
            item.attempts += 1
            switch await attempt(item.event, deliveryID: item.deliveryID, attempt: item.attempts) {
            case .delivered:
                metrics.record(.delivered, event: item.event.eventType)
                await ended(item)
            case .failed(let problem, let final, let retryAfter):
                if final || item.attempts >= configuration.maxAttempts {
                    giveUp(item.event, deliveryID: item.deliveryID, attempts: item.attempts, reason: problem, outcome: .failed)
                    await ended(item, givenUp: problem)
                } else if let outbox, let event = item.event as? StoredWebhookEvent,
                    await !attemptsRecorded(event, attempts: item.attempts, in: outbox)
                {
                    queue.done(item)  // its lease went to another node, which goes on with it
                } else if queue.isClosed, let outbox, let event = item.event as? StoredWebhookEvent {
                    // Stopping: the outbox keeps it for later rather than its attempts being spent in the drain.
                    queue.done(item)
                    await giveBack([(event, item.attempts)], to: outbox)
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
        let message: Logger.Message =
            switch outcome {
            case .dropped: "webhook event dropped"
            case _ where event is StoredWebhookEvent:
                "webhook event given up (kept in the outbox: `sealed-push-gateway webhook redeliver` sends it again)"
            default: "webhook event given up"
            }
        logger.error(message, metadata: metadata)
    }
}
