/// What the webhook's outbox holds (``GatewayStore/webhookOutboxDepth()``); encoded as `status --json` shows it.
public struct WebhookOutboxDepth: Sendable, Hashable, Encodable {
    /// Events to post: waiting, being posted by a node, or held by one that died (the backlog an operator watches
    /// when a receiver is down).
    public var waiting: Int
    /// Events given up and kept for the operator to send again (``GivenUpWebhookEvent``).
    public var givenUp: Int

    /// Creates the counts.
    public init(waiting: Int, givenUp: Int) {
        self.waiting = waiting
        self.givenUp = givenUp
    }
}
