import ArgumentParser
import SealedPushCore

/// The content and placeholder options shared by `seal` and `send`.
struct SealOptions: ParsableArguments {
    @Option(help: "The notification title.")
    var title: String?

    @Option(help: "The notification body.")
    var body: String?

    @Option(help: "A JSON file with the full content (spec §4); --title and --body override its fields.")
    var content: String?

    @Option(help: "Seconds until the envelope expires (1 ... 2419200).")
    var ttl: UInt64 = EnvelopeV1.defaultTTL

    @Option(help: "The placeholder body shown when the device cannot decrypt.")
    var placeholderBody: String = "New notification"

    @Option(help: "An optional placeholder title.")
    var placeholderTitle: String?

    @Option(help: "A localization key for the placeholder instead of plain text.")
    var placeholderLocKey: String?

    @Option(help: "An optional placeholder sound name.")
    var placeholderSound: String?

    /// The content from the options.
    func notificationContent() throws -> NotificationContent {
        var result = NotificationContent()
        if let content {
            result = try NotificationContent(json: CLIIO.read(content, limit: 64 * 1024, what: "content"))
        }
        if let title { result.title = title }
        if let body { result.body = body }
        return result
    }

    /// The placeholder from the options.
    var placeholder: Placeholder {
        if let placeholderLocKey { return .localized(key: placeholderLocKey, sound: placeholderSound) }
        return .text(title: placeholderTitle, body: placeholderBody, sound: placeholderSound)
    }

    /// Whether any content option was given.
    var hasContent: Bool { title != nil || body != nil || content != nil }
}
