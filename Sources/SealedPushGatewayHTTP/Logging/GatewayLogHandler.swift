import Logging

/// The gateway's log handler: swift-log's `StreamLogHandler` with its metadata formatted only when a line is written.
///
/// The stream handler formats all of its metadata again each time an entry is set, and Hummingbird sets one (the
/// request id) on every request's logger: thousands of times a second under load, about 2 % of the gateway's CPU
/// in `scripts/gateway-load.sh`, for lines that are mostly never written. The lines are the stream handler's own.
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
        stream.log(event: event)
    }
}
