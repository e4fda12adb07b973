import Foundation
import Logging
import SealedPushGatewayHTTP
import Synchronization
import Testing

/// ``GatewayLogHandler`` writes exactly the lines swift-log's `StreamLogHandler` writes for the same logger.
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
}
