import SealedPushCore

/// A notification the system shows, as control messages see it (`Specs/control-v1.md` §2.1).
public struct DeliveredNotification: Sendable, Hashable {
    /// The system's request identifier (`UNNotificationRequest.identifier`: the `apns-collapse-id` when one was sent).
    public var requestIdentifier: String
    /// The SealedPush notification id from its `userInfo` (`sealedpush-notification-id`), if it has one.
    public var notificationID: String?
    /// Its thread identifier, if any.
    public var threadIdentifier: String?

    /// Creates a description of a delivered notification.
    ///
    /// - Parameters:
    ///   - requestIdentifier: The system's request identifier.
    ///   - notificationID: The SealedPush notification id from its `userInfo`.
    ///   - threadIdentifier: Its thread identifier.
    public init(requestIdentifier: String, notificationID: String? = nil, threadIdentifier: String? = nil) {
        self.requestIdentifier = requestIdentifier
        self.notificationID = notificationID
        self.threadIdentifier = threadIdentifier
    }
}

/// The delivered notifications and the badge, which control messages act on: `UNUserNotificationCenter` on iOS
/// (`getDeliveredNotifications`, `removeDeliveredNotifications(withIdentifiers:)`, `setBadgeCount`), and
/// ``InMemoryNotificationCenter`` in tests and on Linux.
public protocol DeliveredNotificationCenter: Sendable {
    /// The notifications the system shows now.
    func deliveredNotifications() async -> [DeliveredNotification]
    /// Removes the delivered notifications with these request identifiers (unknown ones are ignored).
    func removeDeliveredNotifications(withIdentifiers identifiers: [String]) async
    /// Sets the app's badge.
    func setBadgeCount(_ count: Int) async throws
}
