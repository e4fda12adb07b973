import Foundation
import Logging

/// A log handler that keeps every entry (level, label, message, metadata) so a test can search what was logged.
public final class CapturedLogs: @unchecked Sendable {  // `stored` is behind `lock`
    /// One entry, its metadata values rendered as text.
    public struct Line: Sendable {
        public var level: Logger.Level
        public var label: String
        public var message: String
        public var metadata: [String: String]

        /// The message and every metadata value as `key=value`, keys sorted (what a log file would hold).
        public var text: String {
            ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        }
    }

    private let lock = NSLock()
    private var stored: [Line] = []

    /// An empty record.
    public init() {}

    /// A logger at `trace` that writes here.
    /// - Parameter label: The logger's label, kept with each entry.
    /// - Returns: The logger.
    public func logger(label: String = "test") -> Logger {
        var logger = Logger(label: label) { label in Handler(label: label, sink: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Every entry so far.
    public var lines: [Line] { lock.withLock { stored } }

    /// Every entry so far, one line each: level, label, message and metadata.
    public var text: String { lines.map { "\($0.level) \($0.label): \($0.text)" }.joined(separator: "\n") }

    fileprivate func append(_ line: Line) { lock.withLock { stored.append(line) } }

    private struct Handler: LogHandler {
        let label: String
        let sink: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            sink.append(
                Line(level: event.level, label: label, message: "\(event.message)", metadata: all.mapValues { "\($0)" }))
        }
    }
}
