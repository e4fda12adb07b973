/// The push service a device is reached through (`Specs/fcm-v1.md` §7).
public enum PushPlatform: String, Sendable, Hashable, CaseIterable, Codable {
    /// Apple Push Notification service (iOS); every registration made before platforms existed.
    case apns
    /// Firebase Cloud Messaging (Android).
    case fcm
}
