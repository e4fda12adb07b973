import ArgumentParser
import SealedPushCore

/// The content and placeholder options shared by `seal` and `send`.
struct SealOptions: ParsableArguments {
    // Free text is parsed `.unconditional`: the next argument is the value even when it starts with `-`.
    @Option(parsing: .unconditional, help: "The notification title.")
    var title: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The notification body; the next argument is taken as is, even when it starts with `-` (or use --body-file).",
        valueName: "text"))
    var body: String?

    @Option(help: ArgumentHelp(
        "Read the title from a UTF-8 file (`-`: standard input); one final newline is dropped.", valueName: "file"))
    var titleFile: String?

    @Option(help: ArgumentHelp(
        "Read the body from a UTF-8 file (`-`: standard input); one final newline is dropped.", valueName: "file"))
    var bodyFile: String?

    @Option(help: ArgumentHelp(
        "A JSON file with the full content (spec §4; `-`: standard input); --title and --body override its fields.",
        valueName: "file"))
    var content: String?

    @Option(help: "Seconds until the envelope expires (1 ... 2419200).")
    var ttl: UInt64 = EnvelopeV1.defaultTTL

    @Option(parsing: .unconditional, help: "The placeholder body shown when the device cannot decrypt.")
    var placeholderBody: String = "New notification"

    @Option(parsing: .unconditional, help: "An optional placeholder title.")
    var placeholderTitle: String?

    @Option(help: "A localization key for the placeholder instead of plain text.")
    var placeholderLocKey: String?

    @Option(name: .customLong("placeholder-loc-arg"), parsing: .unconditionalSingleValue, help: ArgumentHelp(
        "An argument for the placeholder's localization key, in order (repeatable; needs --placeholder-loc-key).",
        valueName: "text"))
    var placeholderLocArgs: [String] = []

    @Option(help: "An optional placeholder sound name.")
    var placeholderSound: String?

    /// The content from the options.
    func notificationContent() throws -> NotificationContent {
        var result = NotificationContent()
        if let content {
            result = try NotificationContent(json: CLIIO.read(content, limit: 64 * 1024, what: "--content"))
        }
        if let titleFile { result.title = try Self.text(titleFile, what: "--title-file") }
        if let bodyFile { result.body = try Self.text(bodyFile, what: "--body-file") }
        if let title { result.title = title }
        if let body { result.body = body }
        return result
    }

    /// Checks the option combinations.
    func validate() throws {
        if !placeholderLocArgs.isEmpty, placeholderLocKey == nil {
            throw ValidationError("--placeholder-loc-arg needs --placeholder-loc-key")
        }
        if title != nil, titleFile != nil { throw ValidationError("give --title or --title-file, not both") }
        if body != nil, bodyFile != nil { throw ValidationError("give --body or --body-file, not both") }
        let stdinReaders = [titleFile, bodyFile, content].filter { $0 == "-" }.count
        if stdinReaders > 1 { throw ValidationError("only one of --title-file, --body-file and --content can be `-`") }
    }

    /// The placeholder from the options.
    var placeholder: Placeholder {
        if let placeholderLocKey {
            return .localized(key: placeholderLocKey, args: placeholderLocArgs, sound: placeholderSound)
        }
        return .text(title: placeholderTitle, body: placeholderBody, sound: placeholderSound)
    }

    /// Whether any content option was given.
    var hasContent: Bool { title != nil || body != nil || content != nil || titleFile != nil || bodyFile != nil }

    /// A text field read from a file (`what` is its option): valid UTF-8, one final newline (`\n` or `\r\n`) dropped.
    private static func text(_ path: String, what: String) throws -> String {
        var bytes = try CLIIO.read(path, limit: 64 * 1024, what: what)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw SealedPushError(.invalidArgument, "\(what) \(path) is not valid UTF-8")
        }
        return text
    }
}
