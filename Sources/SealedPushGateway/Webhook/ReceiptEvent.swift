import Foundation
import SealedPushCore

/// What the webhook tells a backend when a device's sealed receipt was recorded (`Specs/control-v1.md` §4): the
/// ids, the outcome the device reported and its times — the fields the status shows, nothing else.
///
/// `{"type":"notification.receipt","appId":…,"notificationId":…,"deviceId":…,"outcome":"fallback",
/// "reason":"timedOut","attachmentsDelivered":0,"attachmentsFailed":1,"deviceTime":"…Z","receivedAt":"…Z"}`
/// (`reason` only with `fallback`). Only a job's first receipt is forwarded.
public struct ReceiptEvent: WebhookEvent, Hashable {
    /// The `SealedPush-Event` header of receipts.
    public static let type = "notification.receipt"

    public var eventType: String { Self.type }
    /// The app.
    public var appID: String
    /// The notification the receipt is about.
    public var notificationID: UUID
    /// The device whose job it was.
    public var deviceID: String
    /// `decrypted`, `duplicate` or `fallback`.
    public var outcome: String
    /// With `fallback`: the device's reason code.
    public var reason: String?
    /// Attachment files delivered.
    public var attachmentsDelivered: Int
    /// Attachment files not delivered.
    public var attachmentsFailed: Int
    /// When the device decided (its clock).
    public var deviceTime: Date
    /// When the gateway recorded it.
    public var receivedAt: Date

    /// Creates an event.
    public init(
        appID: String, notificationID: UUID, deviceID: String, outcome: String, reason: String?,
        attachmentsDelivered: Int, attachmentsFailed: Int, deviceTime: Date, receivedAt: Date
    ) {
        self.appID = appID
        self.notificationID = notificationID
        self.deviceID = deviceID
        self.outcome = outcome
        self.reason = reason
        self.attachmentsDelivered = attachmentsDelivered
        self.attachmentsFailed = attachmentsFailed
        self.deviceTime = deviceTime
        self.receivedAt = receivedAt
    }

    /// The app, the notification and the device.
    public var logMetadata: [String: String] {
        ["app": appID, "notification": notificationID.uuidString.lowercased(), "device": deviceID]
    }

    public var jsonBody: [UInt8] {
        struct Body: Encodable {
            var type: String
            var appId: String
            var notificationId: String
            var deviceId: String
            var outcome: String
            var reason: String?
            var attachmentsDelivered: Int
            var attachmentsFailed: Int
            var deviceTime: String
            var receivedAt: String
        }
        return Self.json(
            Body(
                type: Self.type, appId: appID, notificationId: notificationID.uuidString.lowercased(), deviceId: deviceID,
                outcome: outcome, reason: reason, attachmentsDelivered: attachmentsDelivered,
                attachmentsFailed: attachmentsFailed, deviceTime: DeviceRegistration.formatDate(deviceTime),
                receivedAt: DeviceRegistration.formatDate(receivedAt)))
    }
}
