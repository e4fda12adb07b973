import Foundation

/// A notification the emulator accepted (answered 200).
public struct RecordedNotification: Sendable, Hashable {
    /// The device token from the path, lowercase hex.
    public let deviceToken: String
    /// The `apns-id` (the client's, or one the emulator assigned), lowercase.
    public let apnsID: String
    /// `apns-topic`.
    public let topic: String
    /// `apns-push-type`, or nil if the request had none (APNs accepts that; Apple requires it only for watchOS).
    public let pushType: String?
    /// `apns-priority`, if sent.
    public let priority: Int?
    /// `apns-expiration`, if sent.
    public let expiration: Int64?
    /// `apns-collapse-id`, if sent.
    public let collapseID: String?
    /// The JSON body exactly as received.
    public let body: [UInt8]
    /// When it was accepted (emulator clock).
    public let acceptedAt: Date
}
