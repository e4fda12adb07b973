/// Where a node's webhook takes its events from when they are durable: the store's outbox
/// (``GatewayStore/claimWebhookEvents(owner:limit:leaseDuration:now:)``), written by the transactions that make them
/// true. With it, an event outlives the process that saw it happen, a receiver down for longer than the node's queue,
/// and graceful stops (an event not delivered by then goes back to the outbox, not away).
public struct WebhookOutbox: Sendable {
    /// The store holding the outbox.
    public var store: any GatewayStore
    /// The lease owner this node's webhook claims under (the delivery service's ``NodeInstance/leaseOwner``, so that
    /// the node's next incarnation takes its events back at once).
    public var owner: String
    /// How long a claimed event stays leased without a renewal; renewed every third of it while held.
    public var leaseDuration: Duration = .seconds(60)
    /// How often the outbox is looked at when nothing woke the webhook (events written by other nodes, leases that
    /// expired).
    public var pollInterval: Duration = .seconds(1)
    /// The most events claimed at once.
    public var claimLimit = 64

    /// Creates the outbox's settings for a webhook.
    /// - Parameters:
    ///   - store: The store holding the outbox.
    ///   - owner: The lease owner to claim under.
    public init(store: any GatewayStore, owner: String) {
        self.store = store
        self.owner = owner
    }
}
