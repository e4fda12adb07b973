/// The clear `aps` alert shown when the extension cannot open the envelope (spec §6).
///
/// A placeholder is configuration: it must never be derived from the content.
public struct Placeholder: Sendable, Hashable, Codable {
    /// What the alert says.
    public enum Alert: Sendable, Hashable {
        /// Plain text: an optional title and a body.
        case text(title: String?, body: String)
        /// A localization key in the app's `Localizable.strings`, with optional format arguments.
        case localized(key: String, args: [String])
    }

    /// The alert.
    public var alert: Alert
    /// An optional sound name for the placeholder.
    public var sound: String?

    /// Creates a placeholder.
    /// - Parameters:
    ///   - alert: The alert.
    ///   - sound: An optional sound name.
    public init(alert: Alert, sound: String? = nil) {
        self.alert = alert
        self.sound = sound
    }

    /// A plain-text placeholder.
    /// - Parameters:
    ///   - title: An optional title.
    ///   - body: The body.
    ///   - sound: An optional sound name.
    /// - Returns: The placeholder.
    public static func text(title: String? = nil, body: String, sound: String? = nil) -> Placeholder {
        Placeholder(alert: .text(title: title, body: body), sound: sound)
    }

    /// A localized placeholder.
    /// - Parameters:
    ///   - key: The localization key.
    ///   - args: Format arguments.
    ///   - sound: An optional sound name.
    /// - Returns: The placeholder.
    public static func localized(key: String, args: [String] = [], sound: String? = nil) -> Placeholder {
        Placeholder(alert: .localized(key: key, args: args), sound: sound)
    }

    /// The default placeholder: body "New notification", no title, no sound.
    public static let `default` = Placeholder.text(body: "New notification")

    private enum CodingKeys: String, CodingKey { case title, body, locKey, locArgs, sound }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sound = try container.decodeIfPresent(String.self, forKey: .sound)
        if let key = try container.decodeIfPresent(String.self, forKey: .locKey) {
            alert = .localized(key: key, args: try container.decodeIfPresent([String].self, forKey: .locArgs) ?? [])
        } else {
            alert = .text(
                title: try container.decodeIfPresent(String.self, forKey: .title),
                body: try container.decode(String.self, forKey: .body))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch alert {
        case .text(let title, let body):
            try container.encodeIfPresent(title, forKey: .title)
            try container.encode(body, forKey: .body)
        case .localized(let key, let args):
            try container.encode(key, forKey: .locKey)
            if !args.isEmpty { try container.encode(args, forKey: .locArgs) }
        }
        try container.encodeIfPresent(sound, forKey: .sound)
    }
}
