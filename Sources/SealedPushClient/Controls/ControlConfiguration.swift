import SealedPushCore

/// How the step applies control messages (`Specs/control-v1.md` §2.1) and what a `remove` or `badge` message shows.
public struct ControlConfiguration: Sendable {
    /// What a request that carried a `remove` or `badge` message delivers: nothing shows from it either way.
    public enum Presentation: Sendable, Hashable {
        /// An empty content, which iOS hides only for an extension with the managed entitlement
        /// `com.apple.developer.usernotifications.filtering`. Use it only with that entitlement.
        case suppress
        /// A fixed quiet placeholder (no sound, passive): what an extension without the entitlement must show
        /// instead of an empty content, since iOS would otherwise show the sender's placeholder alert.
        case quietPlaceholder(Placeholder)
    }

    /// The delivered notifications and badge the controls act on (`UNUserNotificationCenter` on iOS).
    public var center: any DeliveredNotificationCenter
    /// What a `remove` or `badge` request delivers.
    public var presentation: Presentation

    /// Creates a control configuration.
    ///
    /// - Parameters:
    ///   - center: The delivered notifications and badge.
    ///   - presentation: What a `remove` or `badge` request delivers (default: a quiet placeholder reading
    ///     "Notifications updated").
    public init(
        center: any DeliveredNotificationCenter,
        presentation: Presentation = .quietPlaceholder(.text(body: "Notifications updated"))
    ) {
        self.center = center
        self.presentation = presentation
    }

    /// The delivery content of a `remove` or `badge` request.
    var deliveryContent: NotificationDelivery.Content {
        switch presentation {
        case .suppress: .suppressed
        case .quietPlaceholder(let placeholder): .placeholder(placeholder)
        }
    }

    /// Applies a control (§2.1 steps 1–3) to the delivered notifications: what the step does for a request, and what
    /// an app does with a control message that came as a background push (opened with the same receiver).
    ///
    /// - Parameters:
    ///   - control: The control message's `control` member (``NotificationContent/control``).
    ///   - requestIdentifier: The current request's identifier, which an update never removes (the system replaces
    ///     it by its collapse id); nil for a background push.
    /// - Throws: What the center's `setBadgeCount` throws.
    public func apply(_ control: NotificationControl, requestIdentifier: String?) async throws {
        switch control.action {
        case .remove(let ids, let threadID):
            // Ids and thread ids compare code point by code point (control-v1 §1), not as Swift's canonically
            // equivalent Strings: "\u{e9}" and "e\u{301}" name two notifications.
            let wanted = Set(ids.map { Array($0.utf8) })
            let thread = threadID.map { Array($0.utf8) }
            let matches = await center.deliveredNotifications().filter { notification in
                (notification.notificationID.map { wanted.contains(Array($0.utf8)) } ?? false)
                    || (thread != nil && notification.threadIdentifier.map { Array($0.utf8) } == thread)
            }
            if !matches.isEmpty {
                await center.removeDeliveredNotifications(withIdentifiers: matches.map(\.requestIdentifier))
            }
        case .update(let id):
            let stale = await center.deliveredNotifications().filter {
                ($0.notificationID?.utf8.elementsEqual(id.utf8) ?? false)
                    && !(requestIdentifier?.utf8.elementsEqual($0.requestIdentifier.utf8) ?? false)
            }
            if !stale.isEmpty {
                await center.removeDeliveredNotifications(withIdentifiers: stale.map(\.requestIdentifier))
            }
        case .badge(let count):
            try await center.setBadgeCount(count)
        }
    }
}
