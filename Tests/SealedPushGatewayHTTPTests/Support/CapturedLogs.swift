import Foundation
import Logging

/// A log handler that keeps every line (message and metadata) so a test can search what the gateway logged.
final class CapturedLogs: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    /// A logger at `trace` that writes here.
    func logger(label: String) -> Logger {
        Logger(label: label) { label in Handler(label: label, sink: self) }
    }

    /// Everything logged so far, one line per entry.
    var text: String { lock.withLock { lines.joined(separator: "\n") } }

    fileprivate func append(_ line: String) { lock.withLock { lines.append(line) } }

    private struct Handler: LogHandler {
        let label: String
        let sink: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(
            level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String,
            file: String, function: String, line: UInt
        ) {
            let all = metadata.merging(explicit ?? [:]) { $1 }
            sink.append("\(level) \(label): \(message) \(all)")
        }
    }
}
