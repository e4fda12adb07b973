import Foundation
import Logging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The gateway's webhook: posts ``WebhookEvent``s — ``UnregisteredDeviceEvent``s from delivery, ``ReceiptEvent``s from
/// the receipt endpoint — to the configured URL, signed (see ``UnregisteredWebhookConfiguration`` for the headers),
/// with a deadline on every attempt and bounded retries. ``notify(_:)`` never waits: events queue up
/// (bounded) and ``run()`` sends them one after the other.
public final class UnregisteredWebhook: Sendable {
    /// The configuration.
    public let configuration: UnregisteredWebhookConfiguration

    private let events: AsyncStream<any WebhookEvent>
    private let continuation: AsyncStream<any WebhookEvent>.Continuation
    private let session: URLSession
    private let logger: Logger

    /// Creates a webhook sender.
    /// - Parameters:
    ///   - configuration: URL, secret, limits.
    ///   - logger: Where failures are logged (ids and reason only).
    /// - Throws: `SealedPushError` `invalidArgument` for limits out of range.
    public init(configuration: UnregisteredWebhookConfiguration, logger: Logger) throws {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        (events, continuation) = AsyncStream.makeStream(
            of: (any WebhookEvent).self, bufferingPolicy: .bufferingOldest(configuration.queueLimit))
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        let seconds = DeliveryDecision.seconds(configuration.requestTimeout)
        sessionConfiguration.timeoutIntervalForRequest = seconds
        sessionConfiguration.timeoutIntervalForResource = seconds
        sessionConfiguration.connectionProxyDictionary = [:]
        session = URLSession(configuration: sessionConfiguration)
    }

    /// Queues an event; returns at once. An event beyond the queue limit, or after ``finish()``, is dropped and
    /// logged.
    public func notify(_ event: any WebhookEvent) {
        if case .enqueued = continuation.yield(event) { return }
        logger.warning(
            "webhook event dropped (queue full or closed)",
            metadata: ["app": "\(event.appID)", "device": "\(event.deviceID)", "event": "\(event.eventType)"])
    }

    /// Accepts no more events; ``run()`` returns once the queued ones are sent (or given up).
    public func finish() { continuation.finish() }

    /// Sends queued events until ``finish()`` (or cancellation).
    public func run() async {
        for await event in events {
            if Task.isCancelled { break }
            _ = await deliver(event)
        }
        session.invalidateAndCancel()
    }

    /// Sends one event with retries.
    /// - Returns: True when the receiver answered 2xx.
    @discardableResult
    public func deliver(_ event: any WebhookEvent) async -> Bool {
        let body = event.jsonBody
        let deliveryID = UUID().uuidString.lowercased()
        var lastProblem = ""
        for attempt in 1...configuration.maxAttempts {
            if attempt > 1 {
                let delay = configuration.initialBackoff * (1 << min(attempt - 2, 16))
                do { try await Task.sleep(for: delay) } catch { break }
            }
            let timestamp = String(Int64(Date().timeIntervalSince1970))
            var request = URLRequest(url: configuration.url)
            request.httpMethod = "POST"
            request.timeoutInterval = DeliveryDecision.seconds(configuration.requestTimeout)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue(event.eventType, forHTTPHeaderField: UnregisteredWebhookConfiguration.eventHeader)
            request.setValue(deliveryID, forHTTPHeaderField: UnregisteredWebhookConfiguration.deliveryHeader)
            request.setValue(timestamp, forHTTPHeaderField: UnregisteredWebhookConfiguration.timestampHeader)
            request.setValue(
                configuration.signature(timestamp: timestamp, body: body),
                forHTTPHeaderField: UnregisteredWebhookConfiguration.signatureHeader)
            request.httpBody = Data(body)
            do {
                let status = try await post(request)
                if (200..<300).contains(status) {
                    logger.debug("webhook delivered", metadata: ["delivery": "\(deliveryID)", "attempt": "\(attempt)"])
                    return true
                }
                lastProblem = "HTTP \(status)"
            } catch {
                lastProblem = "\(error)"
            }
            logger.notice(
                "webhook attempt failed",
                metadata: ["delivery": "\(deliveryID)", "attempt": "\(attempt)", "problem": "\(lastProblem)"])
        }
        logger.error(
            "webhook event given up",
            metadata: [
                "delivery": "\(deliveryID)", "app": "\(event.appID)", "device": "\(event.deviceID)",
                "problem": "\(lastProblem)",
            ])
        return false
    }

    /// One POST with a deadline of its own (besides URLSession's timeout), kept by ``AbandonableCall`` (a NIO
    /// scheduled task): a task group racing a `Task.sleep` left the cancelled sleep allocated after every answered
    /// POST on this platform's runtime.
    private func post(_ request: URLRequest) async throws -> Int {
        let timeout = configuration.requestTimeout
        let session = self.session
        return try await AbandonableCall.run(deadline: timeout, timeoutError: { WebhookTimeout(timeout: timeout) }) {
            let (_, response) = try await session.data(for: request)
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }
    }
}

/// A webhook attempt that took longer than its deadline.
struct WebhookTimeout: Error, CustomStringConvertible {
    let timeout: Duration
    var description: String { "no answer within \(timeout)" }
}
