import Foundation
import Logging
import SealedPushCore

/// The gateway's log lines as JSON (`"logFormat": "json"`), one object per line, for log pipelines that index fields
/// (Loki, Elasticsearch, CloudWatch):
///
/// ```json
/// {"time":"2026-11-29T05:44:13.120Z","level":"info","label":"sealed-push.gateway","source":"sealed_push_gateway","message":"listening","metadata":{"port":"8097"}}
/// ```
///
/// `metadata` is present only when there is some: the logger's, then the metadata provider's, then the line's own
/// (a later one wins for the same key), as in the text format; each value a string, or an array or object of them,
/// with keys sorted. Strings are escaped as
/// JSON requires (a message with a newline stays one line). Like the text format, it carries what the gateway logs,
/// which is never content, a token or a key.
public struct JSONLogHandler: LogHandler {
    /// The metadata of this logger.
    public var metadata: Logger.Metadata = [:]
    /// The lowest level written.
    public var logLevel: Logger.Level
    /// Metadata added to every line (before the logger's own).
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    /// Creates a handler.
    /// - Parameters:
    ///   - label: The logger's label.
    ///   - level: The lowest level written.
    ///   - metadataProvider: Metadata added to every line.
    ///   - write: Writes one line (with its newline).
    public init(
        label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.label = label
        self.logLevel = level
        self.metadataProvider = metadataProvider
        self.write = write
    }

    /// A handler writing to standard error, one `write` per line (lines of concurrent loggers do not interleave).
    /// - Parameters:
    ///   - label: The logger's label.
    ///   - level: The lowest level written.
    /// - Returns: The handler.
    public static func standardError(label: String, level: Logger.Level) -> JSONLogHandler {
        JSONLogHandler(label: label, level: level) { line in
            var line = line
            line.withUTF8 { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = Foundation.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                    guard written > 0 else { if written < 0, errno == EINTR { continue } else { return } }
                    offset += written
                }
            }
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // The order of swift-log's stream handler (the text format): the logger's, the provider's, the line's own,
        // then an error's message and type.
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, provided in provided } }
        if let explicit = event.metadata { merged.merge(explicit) { _, line in line } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var json = JSONWriter()
        json.raw(#"{"time":"#)
        json.string(Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        json.raw(#","level":"#)
        json.string(event.level.rawValue)
        json.raw(#","label":"#)
        json.string(label)
        json.raw(#","source":"#)
        json.string(event.source)
        json.raw(#","message":"#)
        json.string(event.message.description)
        if !merged.isEmpty {
            json.raw(#","metadata":"#)
            Self.object(merged, into: &json)
        }
        json.raw("}\n")
        write(String(decoding: json.bytes, as: UTF8.self))
    }

    private static func object(_ metadata: Logger.Metadata, into json: inout JSONWriter) {
        json.raw("{")
        for (index, key) in metadata.keys.sorted().enumerated() {
            if index > 0 { json.raw(",") }
            json.string(key)
            json.raw(":")
            value(metadata[key]!, into: &json)
        }
        json.raw("}")
    }

    private static func value(_ value: Logger.Metadata.Value, into json: inout JSONWriter) {
        switch value {
        case .string(let text): json.string(text)
        case .stringConvertible(let convertible): json.string(convertible.description)
        case .dictionary(let dictionary): object(dictionary, into: &json)
        case .array(let array):
            json.raw("[")
            for (index, element) in array.enumerated() {
                if index > 0 { json.raw(",") }
                Self.value(element, into: &json)
            }
            json.raw("]")
        }
    }
}
