import Foundation
import Logging
import SealedPushGatewayHTTP
import Synchronization
import Testing

/// ``GatewayLogHandler`` writes exactly the lines swift-log's `StreamLogHandler` writes for the same logger, each entry
/// on one line with its control characters escaped.
@Suite("Gateway log handler")
struct GatewayLogHandlerTests {
    /// Lines written to memory, without their timestamps (the first word).
    final class Lines: TextOutputStream, @unchecked Sendable {
        private let lines = Mutex<[String]>([])
        func write(_ string: String) {
            let text = string.split(separator: " ", maxSplits: 1).last.map(String.init) ?? string
            lines.withLock { $0.append(text) }
        }
        var written: [String] { lines.withLock { $0 } }
    }

    @Test func linesAreTheStreamHandlersOwn() {
        let ours = Lines()
        let theirs = Lines()
        var gateway = Logger(label: "gw") { GatewayLogHandler(wrapping: StreamLogHandler(label: $0, stream: ours, metadataProvider: nil)) }
        var stream = Logger(label: "gw") { StreamLogHandler(label: $0, stream: theirs, metadataProvider: nil) }
        func use(_ logger: inout Logger) {
            logger.logLevel = .info
            logger[metadataKey: "hb.request.id"] = "7f3a"
            logger[metadataKey: "node"] = "gw-1"
            logger.info("sent", metadata: ["job": "12", "node": "gw-2"])  // explicit metadata wins
            logger[metadataKey: "node"] = nil
            logger.debug("not written")
            logger.warning("lease lost")
        }
        use(&gateway)
        use(&stream)
        #expect(ours.written.count == 2)
        #expect(ours.written == theirs.written)
    }

    /// Regression: a message or metadata value holding a line feed wrote two lines (the second one forged: any text
    /// after it, such as a level and a message of its own), and a terminal escape reached the operator's terminal.
    /// Now each entry is one line, its control characters written as escapes; the stream handler's format otherwise.
    @Test func oneEntryIsOneLineWithoutControlCharacters() {
        final class Raw: TextOutputStream, @unchecked Sendable {
            private let text = Mutex("")
            func write(_ string: String) { text.withLock { $0 += string } }
            var written: String { text.withLock { $0 } }
        }
        let raw = Raw()
        var logger = Logger(label: "gw") { GatewayLogHandler(wrapping: StreamLogHandler(label: $0, stream: raw, metadataProvider: nil)) }
        logger.logLevel = .info
        logger[metadataKey: "peer"] = "a\rb"
        logger.warning(
            "upstream said: bad\n2026-11-30T00:00:00+0000 error gw : forged",
            metadata: [
                "reason": "\u{1B}[31mred\u{1B}[0m\tend", "nested": ["x\u{2028}y", ["k": "\u{85}z"]],
                "count": .stringConvertible(3),
            ])
        let written = raw.written
        #expect(written.hasSuffix("\n"))
        let lines = written.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 1, "\(written)")
        #expect(!written.dropLast().unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        #expect(written.contains("upstream said: bad\\n2026-11-30T00:00:00+0000 error gw : forged"), "\(written)")
        #expect(written.contains("\\u{1B}[31mred\\u{1B}[0m\\tend"), "\(written)")
        #expect(written.contains("a\\rb"), "\(written)")
        // Nested values (an array, a dictionary) are written as Swift prints collections, whose strings are quoted:
        // what matters is that no control character is left (above).
        #expect(written.contains("count=3"), "\(written)")
    }
}
