import Foundation
import SealedPushCore

/// What the webhook tells a backend when one of its devices becomes unregistered: ids, APNs's reason and the
/// time — never content, a sealed body or the device token.
///
/// The body is a JSON object with these members:
/// `{"type":"device.unregistered","appId":…,"deviceId":…,"reason":…,"unregisteredAt":"2026-11-23T12:00:00Z"}`.
public struct UnregisteredDeviceEvent: WebhookEvent, Hashable {
    public var eventType: String { UnregisteredWebhookConfiguration.eventType }
    /// The app.
    public var appID: String
    /// The device.
    public var deviceID: String
    /// APNs's reason: `Unregistered`, `BadDeviceToken` or `DeviceTokenNotForTopic`.
    public var reason: String
    /// Since when the token is invalid: APNs's `timestamp` of a 410 answer, else when the gateway marked the device.
    public var unregisteredAt: Date

    /// Creates an event.
    public init(appID: String, deviceID: String, reason: String, unregisteredAt: Date) {
        self.appID = appID
        self.deviceID = deviceID
        self.reason = reason
        self.unregisteredAt = unregisteredAt
    }

    /// The JSON body (UTF-8).
    public var jsonBody: [UInt8] {
        struct Body: Encodable {
            var type: String
            var appId: String
            var deviceId: String
            var reason: String
            var unregisteredAt: String
        }
        return Self.json(
            Body(
                type: UnregisteredWebhookConfiguration.eventType, appId: appID, deviceId: deviceID, reason: reason,
                unregisteredAt: DeviceRegistration.formatDate(unregisteredAt)))
    }
}
