import Logging

/// The gateway's log handler: swift-log's `StreamLogHandler` with its metadata formatted only when a line is written.
///
/// The stream handler formats all of its metadata again each time an entry is set, and Hummingbird sets one (the
/// request id) on every request's logger: thousands of times a second under load, about 2 % of the gateway's CPU
/// in `scripts/gateway-load.sh`, for lines that are mostly never written. The lines are the stream handler's own,
/// except that **one entry is always one line of plain text**: control characters in the message or in a metadata
/// value — a line feed, a carriage return, a terminal escape (`ESC`), any other C0 or C1 control, `DEL`, U+2028 and
/// U+2029 — are written escaped (`\n`, `\r`, `\t`, `\u{1B}`), so text reaching a log from outside (an error a peer
/// sent, a reason from a provider) can neither forge a line nor drive an operator's terminal.
///
/// ```swift
/// LoggingSystem.bootstrap { GatewayLogHandler.standardError(label: $0, level: .info) }
/// ```
public struct GatewayLogHandler: LogHandler {
    private var stream: StreamLogHandler

    /// The metadata of this logger, formatted with each line written.
    public var metadata: Logger.Metadata = [:]

    /// Wraps a stream handler (its own metadata stays empty: this handler keeps it).
    /// - Parameter stream: Where lines are formatted and written.
    public init(wrapping stream: StreamLogHandler) {
        self.stream = stream
    }

    /// A handler writing to standard error.
    /// - Parameters:
    ///   - label: The logger's label.
    ///   - level: The lowest level written.
    /// - Returns: The handler.
    public static func standardError(label: String, level: Logger.Level) -> GatewayLogHandler {
        var stream = StreamLogHandler.standardError(label: label)
        stream.logLevel = level
        return GatewayLogHandler(wrapping: stream)
    }

    public var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        let message = event.message.description
        if Self.needsEscaping(message) { event.message = "\(Self.escaped(message))" }
        if let metadata = event.metadata { event.metadata = metadata.mapValues(Self.escaped) }
        stream.log(event: event)
    }

    /// A metadata value whose strings have their control characters escaped (nested values too).
    private static func escaped(_ value: Logger.MetadataValue) -> Logger.MetadataValue {
        switch value {
        case .string(let text):
            return needsEscaping(text) ? .string(escaped(text)) : value
        case .stringConvertible(let convertible):
            let text = convertible.description
            return needsEscaping(text) ? .string(escaped(text)) : value
        case .array(let values):
            return .array(values.map(escaped))
        case .dictionary(let values):
            return .dictionary(values.mapValues(escaped))
        }
    }

    /// Whether `text` holds a character ``escaped(_:)`` rewrites.
    static func needsEscaping(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    /// `text` with each control character written as an escape: `\n`, `\r`, `\t`, or `\u{…}` in hex.
    /// - Parameter text: A message or metadata value.
    /// - Returns: The text on one line, without control characters.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    /// C0 controls, `DEL`, C1 controls, and the Unicode line and paragraph separators.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
