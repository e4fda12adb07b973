import ServiceLifecycle

/// Runs the webhook on a node that does not deliver (the delivery service runs it otherwise), so the receipts such a
/// node takes are forwarded too.
///
/// On graceful shutdown it accepts no more events and gives the queued ones the webhook's
/// ``UnregisteredWebhookConfiguration/drainDeadline``; `serve` stops it after the HTTP API, so no receipt arrives
/// after that.
public struct WebhookService: Service {
    /// The webhook it runs.
    public let webhook: UnregisteredWebhook

    /// Creates the service.
    /// - Parameter webhook: The webhook the receipt endpoint notifies.
    public init(webhook: UnregisteredWebhook) {
        self.webhook = webhook
    }

    /// Sends the webhook's events until graceful shutdown, then drains its queue within the drain deadline.
    public func run() async throws {
        let webhook = self.webhook
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await webhook.run() }
            try? await gracefulShutdown()  // returns on graceful shutdown, throws on cancellation
            webhook.finish()
            let drain = webhook.configuration.drainDeadline
            group.addTask { try? await Task.sleep(for: drain) }
            await group.next()  // the queue drained, or the drain deadline passed
            group.cancelAll()
        }
    }
}
