/// What the notification service step does with an exact duplicate of an envelope it opened moments ago (a
/// sender's resend after a crash or an ambiguous failure; `Specs/keyring-v1.md` §5.5). Either way the user never
/// sees the fallback placeholder for it, and the outcome is ``NotificationOutcome/duplicate(_:)``.
public enum DuplicateHandling: String, Sendable, Hashable, CaseIterable {
    /// Deliver the same decrypted content again (the default). With the same `apns-collapse-id` on both sends the
    /// system replaces the shown notification with this identical one instead of adding a second.
    case deliverAgain
    /// Deliver ``NotificationDelivery/Content/suppressed``: an empty content, which the system does not show. Only
    /// for apps whose extension has the notification-filtering entitlement
    /// (`com.apple.developer.usernotifications.filtering`); without it iOS does not hide the notification and shows
    /// the request's own content (the sender's placeholder).
    case suppress
}
