import Foundation
import Logging

/// A logger whose lines (level, message, metadata rendered as text) the webhook tests read back.
final class WebhookTestLogs: @unchecked Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]

        /// The line as one text: message and every metadata value (what a log file would hold).
        var text: String {
            ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        }
    }

    private let lock = NSLock()
    private var stored: [Line] = []

    /// Every line so far.
    var lines: [Line] { lock.withLock { stored } }
    /// Every line so far as one text.
    var text: String { lines.map(\.text).joined(separator: "\n") }

    /// A logger at `trace` writing here.
    func logger() -> Logger {
        var logger = Logger(label: "test.webhook") { _ in Handler(sink: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ line: Line) { lock.withLock { stored.append(line) } }

    private struct Handler: LogHandler {
        let sink: WebhookTestLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            sink.append(Line(level: event.level, message: "\(event.message)", metadata: all.mapValues { "\($0)" }))
        }
    }
}
