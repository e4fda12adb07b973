#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// What a notification is (`Specs/control-v1.md` §2): content a device shows, an update of such content, or a control
/// message that shows nothing (a removal, sent when a notification is withdrawn, or a badge). Kept with the notification
/// so an update can refuse an id that has no content to replace, or that belongs to a withdrawn notification.
public enum NotificationKind: Sendable, Hashable {
    /// Content sent with `sendNotification` (and every notification stored before kinds were kept).
    case content
    /// An update of the content notification `of` (`updateNotification`; an update of an update updates the same one).
    case update(of: UUID)
    /// The sealed `remove` a withdrawal sends.
    case remove
    /// A sealed `badge` message.
    case badge

    /// The column's text: nil for content, `remove`, `badge`, or `update <id>` (the id in lowercase).
    public var storedText: String? {
        switch self {
        case .content: nil
        case .update(let id): "update " + id.lowercasedString
        case .remove: "remove"
        case .badge: "badge"
        }
    }

    /// The kind of a column's text (nil and anything unknown: content).
    public init(storedText: String?) {
        switch storedText {
        case "remove": self = .remove
        case "badge": self = .badge
        case let text? where text.hasPrefix("update "):
            if let id = UUID(uuidString: String(text.dropFirst("update ".count))) {
                self = .update(of: id)
            } else {
                self = .content
            }
        default: self = .content
        }
    }
}
