/// `android.priority` of an FCM message (`Specs/fcm-v1.md` §2).
public enum FCMPriority: String, Sendable, Hashable, CaseIterable {
    /// Delivered at once, may wake a device in Doze (the default).
    case high
    /// May be delayed while the device dozes.
    case normal
}
