import SealedPushCore

/// A ``DeliveredNotificationCenter`` in memory: what tests (and a Linux receiver) use in place of
/// `UNUserNotificationCenter`. Thread-safe.
public final class InMemoryNotificationCenter: DeliveredNotificationCenter, @unchecked Sendable {
    private let lock = ClientLock()
    private var shown: [DeliveredNotification] = []
    private var badgeCount: Int?

    /// Creates an empty center.
    public init() {}

    /// Shows a notification (as the system does after a content handler delivers); one with the same request
    /// identifier is replaced, as the system replaces a notification with the same `apns-collapse-id`.
    ///
    /// - Parameter notification: The notification.
    public func add(_ notification: DeliveredNotification) {
        lock.withLock {
            shown.removeAll { $0.requestIdentifier == notification.requestIdentifier }
            shown.append(notification)
        }
    }

    /// The badge last set, if any.
    public var badge: Int? { lock.withLock { badgeCount } }

    /// The notifications shown now, oldest first.
    public var delivered: [DeliveredNotification] { lock.withLock { shown } }

    public func deliveredNotifications() async -> [DeliveredNotification] { delivered }

    public func removeDeliveredNotifications(withIdentifiers identifiers: [String]) async {
        let removed = Set(identifiers)
        lock.withLock { shown.removeAll { removed.contains($0.requestIdentifier) } }
    }

    public func setBadgeCount(_ count: Int) async throws {
        lock.withLock { badgeCount = count }
    }
}
