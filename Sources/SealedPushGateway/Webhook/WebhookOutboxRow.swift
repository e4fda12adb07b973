import Foundation
import SealedPushCore

/// An outbox row as both stores write and read it: ids and what the event adds to them, never its JSON (see
/// ``PortableMigrations/webhookOutbox(version:idColumn:)``).
struct WebhookOutboxRow: Sendable {
    var deliveryID: String
    var eventType: String
    var appID: String
    var deviceID: String
    /// An unregistered device's reason.
    var reason: String?
    /// When a device became unregistered (milliseconds).
    var occurredAt: Int64?
    /// The job whose first receipt the event reports.
    var jobID: Int64?

    /// The row of an unregistered device's event, with a new delivery id.
    init(_ event: UnregisteredDeviceEvent) {
        deliveryID = UUID().lowercasedString
        eventType = event.eventType
        appID = event.appID
        deviceID = event.deviceID
        reason = event.reason
        occurredAt = Millis.from(event.unregisteredAt)
    }

    /// The row of a job's first receipt, with a new delivery id.
    init(receiptOf jobID: Int64, appID: String, deviceID: String) {
        deliveryID = UUID().lowercasedString
        eventType = ReceiptEvent.type
        self.appID = appID
        self.deviceID = deviceID
        self.jobID = jobID
    }
}

/// What a claim reads of an outbox row and, for a receipt's event, of its job.
struct ClaimedWebhookRow: Sendable {
    var id: Int64
    var deliveryID: String
    var eventType: String
    var appID: String
    var deviceID: String
    var reason: String?
    var occurredAt: Int64?
    var attempts: Int
    var createdAt: Int64
    // The receipt's job, when the event is a receipt's.
    var notificationID: String?
    var receiptOutcome: String?
    var receiptReason: String?
    var receiptDelivered: Int?
    var receiptFailed: Int?
    var receiptDeviceTime: Int64?
    var receiptAt: Int64?

    /// The event types this gateway builds and posts: claims take only these, so a row a newer gateway wrote waits,
    /// unleased, for a node that knows its type (a rolling upgrade's older nodes neither hold nor renew it).
    static let knownEventTypes = [UnregisteredWebhookConfiguration.eventType, ReceiptEvent.type]

    /// The event to post, its body built now from the row's fields; nil for a type this gateway does not know (a
    /// newer one wrote it; claims leave those out) or a receipt whose job holds no receipt.
    var event: StoredWebhookEvent? {
        let body: [UInt8]
        switch eventType {
        case UnregisteredWebhookConfiguration.eventType:
            guard let reason, let occurredAt else { return nil }
            body =
                UnregisteredDeviceEvent(
                    appID: appID, deviceID: deviceID, reason: reason, unregisteredAt: Millis.date(occurredAt)
                ).jsonBody
        case ReceiptEvent.type:
            guard let notificationID = notificationID.flatMap(UUID.init(uuidString:)), let receiptOutcome,
                let receiptDeviceTime, let receiptAt
            else { return nil }
            body =
                ReceiptEvent(
                    appID: appID, notificationID: notificationID, deviceID: deviceID, outcome: receiptOutcome,
                    reason: receiptReason, attachmentsDelivered: receiptDelivered ?? 0,
                    attachmentsFailed: receiptFailed ?? 0, deviceTime: Millis.date(receiptDeviceTime),
                    receivedAt: Millis.date(receiptAt)
                ).jsonBody
        default:
            return nil
        }
        return StoredWebhookEvent(
            id: id, deliveryID: deliveryID, eventType: eventType, appID: appID, deviceID: deviceID, jsonBody: body,
            attempts: attempts, createdAt: Millis.date(createdAt))
    }
}
