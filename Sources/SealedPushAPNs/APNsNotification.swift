import Foundation
import SealedPushCore

/// One alert notification for one device.
public struct APNsNotification: Sendable, Hashable {
    /// The largest body APNs accepts for an alert.
    public static let maximumPayloadBytes = APNsPayload.maxBodyBytes
    /// The longest `apns-collapse-id` APNs accepts, in bytes.
    public static let maximumCollapseIDBytes = 64

    /// The device.
    public var deviceToken: DeviceToken
    /// `apns-topic`: the app's bundle id.
    public var topic: String
    /// The JSON body, sent as is.
    public var payload: [UInt8]
    /// `apns-priority`.
    public var priority: APNsPriority
    /// `apns-expiration`: until when APNs keeps trying; nil omits the header. `Date(timeIntervalSince1970: 0)`
    /// means "try once".
    public var expiration: Date?
    /// `apns-collapse-id` (≤ 64 bytes); must not reveal content.
    public var collapseID: String?
    /// `apns-id`: identifies this notification across resends; APNs echoes it.
    public var apnsID: UUID
    /// `apns-push-type`: `alert` (default), or `background` for a body with only `content-available`.
    public var pushType: APNsPushType

    /// Creates a notification.
    /// - Parameters:
    ///   - deviceToken: The device.
    ///   - topic: The app's bundle id.
    ///   - payload: The JSON body (≤ 4096 bytes).
    ///   - priority: Default `.immediate` (10).
    ///   - expiration: Default nil (header omitted).
    ///   - collapseID: Default nil.
    ///   - apnsID: Default a new random UUID.
    ///   - pushType: Default `.alert`.
    public init(
        deviceToken: DeviceToken, topic: String, payload: [UInt8], priority: APNsPriority = .immediate,
        expiration: Date? = nil, collapseID: String? = nil, apnsID: UUID = UUID(), pushType: APNsPushType = .alert
    ) {
        self.pushType = pushType
        self.deviceToken = deviceToken
        self.topic = topic
        self.payload = payload
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    /// The checks made before anything is sent: body size and presence, topic, collapse id.
    /// - Returns: The failure APNs would answer (with `status` nil: it was not sent), or nil if the request is valid.
    public func validationFailure() -> APNsFailure? {
        if payload.count > Self.maximumPayloadBytes {
            return APNsFailure(
                reason: .payloadTooLarge, status: nil,
                message:
                    "the body is \(payload.count) bytes, over APNs' \(Self.maximumPayloadBytes)-byte limit; not sent")
        }
        if payload.isEmpty {
            return APNsFailure(reason: .payloadEmpty, status: nil, message: "the body is empty; not sent")
        }
        if topic.isEmpty || topic.utf8.count > 255
            || topic.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value > 0x7E })
        {
            return APNsFailure(
                reason: .missingTopic, status: nil,
                message: "apns-topic must be the app's bundle id (1–255 printable ASCII characters); not sent")
        }
        if let collapseID {
            if collapseID.utf8.count > Self.maximumCollapseIDBytes || collapseID.isEmpty
                || collapseID.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            {
                return APNsFailure(
                    reason: .badCollapseID, status: nil,
                    message:
                        "apns-collapse-id must be 1–\(Self.maximumCollapseIDBytes) bytes without control characters "
                        + "(got \(collapseID.utf8.count)); not sent")
            }
        }
        if let expiration, !(expiration.timeIntervalSince1970 >= 0 && expiration.timeIntervalSince1970 < 1e11) {
            return APNsFailure(
                reason: .badExpirationDate, status: nil, message: "apns-expiration is out of range; not sent")
        }
        return nil
    }
}

/// `apns-push-type`: how APNs and iOS treat the push.
public enum APNsPushType: String, Sendable, Hashable {
    /// Shown to the user (the notification service extension runs for `mutable-content`).
    case alert
    /// Delivered to the app in the background, nothing shown (priority 5; iOS throttles these).
    case background
}

/// `apns-priority`.
public enum APNsPriority: Int, Sendable, Hashable {
    /// 10: deliver immediately.
    case immediate = 10
    /// 5: power-considerate delivery.
    case powerConsiderate = 5
}

/// The per-notification fields of a bulk send that are the same for every device.
public struct APNsNotificationTemplate: Sendable, Hashable {
    /// `apns-topic`.
    public var topic: String
    /// `apns-priority`.
    public var priority: APNsPriority
    /// `apns-expiration`; nil omits the header.
    public var expiration: Date?
    /// `apns-collapse-id`.
    public var collapseID: String?

    /// Creates a template.
    /// - Parameters:
    ///   - topic: The app's bundle id.
    ///   - priority: Default `.immediate`.
    ///   - expiration: Default nil.
    ///   - collapseID: Default nil.
    public init(topic: String, priority: APNsPriority = .immediate, expiration: Date? = nil, collapseID: String? = nil)
    {
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
    }
}
