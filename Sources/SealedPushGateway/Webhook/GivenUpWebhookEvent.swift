import Foundation

/// A webhook event the gateway gave up on — its attempts spent, or refused by the receiver (a redirect, a `4xx`) —
/// kept in the outbox for the operator (``GatewayStore/givenUpWebhookEvents(appID:limit:)``) until it is sent again
/// (``GatewayStore/redeliverWebhookEvents(appID:ids:)``) or the retention purge deletes it.
public struct GivenUpWebhookEvent: Sendable, Hashable {
    /// The outbox row.
    public var id: Int64
    /// The `SealedPush-Delivery` id, kept when it is sent again.
    public var deliveryID: String
    public var eventType: String
    public var appID: String
    public var deviceID: String
    /// Attempts made, by every node.
    public var attempts: Int
    /// When the event was written.
    public var createdAt: Date
    /// When it was given up.
    public var givenUpAt: Date
    /// Why: the last attempt's failure (an HTTP status or a connection error; never the event's body), at most
    /// ``keptFailureLength`` characters.
    public var failure: String

    /// The most characters of a given-up event's failure a store keeps (its first ones): an HTTP status or a connection
    /// error's description is far shorter, so only a runaway description is cut.
    public static let keptFailureLength = 500

    /// `failure` as a store keeps it: its first ``keptFailureLength`` characters.
    static func kept(_ failure: String) -> String {
        String(failure.prefix(keptFailureLength))
    }

    /// Creates a given-up event's description.
    public init(
        id: Int64, deliveryID: String, eventType: String, appID: String, deviceID: String, attempts: Int,
        createdAt: Date, givenUpAt: Date, failure: String
    ) {
        self.id = id
        self.deliveryID = deliveryID
        self.eventType = eventType
        self.appID = appID
        self.deviceID = deviceID
        self.attempts = attempts
        self.createdAt = createdAt
        self.givenUpAt = givenUpAt
        self.failure = failure
    }
}
