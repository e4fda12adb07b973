import Foundation

/// A webhook event as the store's outbox holds it (``GatewayStore/claimWebhookEvents(owner:limit:leaseDuration:now:)``):
/// its row, its JSON body (built from the row when claimed), and the attempts earlier holders made.
public struct StoredWebhookEvent: WebhookEvent, Hashable {
    /// The outbox row.
    public var id: Int64
    /// The `SealedPush-Delivery` id, the same on every attempt by every node.
    public var deliveryID: String
    public var eventType: String
    public var appID: String
    public var deviceID: String
    public var jsonBody: [UInt8]
    /// Attempts made by the nodes that held it before (their leases released or expired).
    public var attempts: Int
    /// When the event was written.
    public var createdAt: Date

    /// Creates the event of an outbox row.
    public init(
        id: Int64, deliveryID: String, eventType: String, appID: String, deviceID: String, jsonBody: [UInt8],
        attempts: Int, createdAt: Date
    ) {
        self.id = id
        self.deliveryID = deliveryID
        self.eventType = eventType
        self.appID = appID
        self.deviceID = deviceID
        self.jsonBody = jsonBody
        self.attempts = attempts
        self.createdAt = createdAt
    }

    /// The app, the device and the outbox row.
    public var logMetadata: [String: String] { ["app": appID, "device": deviceID, "outbox": "\(id)"] }
}
