import Foundation
import Logging
import SealedPushGatewayHTTP
import Synchronization
import Testing

/// ``JSONLogHandler``: one JSON object per line, read back with Foundation's parser (an independent reader).
@Suite("JSON log handler")
struct JSONLogHandlerTests {
    final class Lines: @unchecked Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var written: [String] { lines.withLock { $0 } }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String { "store call timed out" }
    }

    func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func eachLineIsOneObjectWithTheFieldsAndMetadata() throws {
        let lines = Lines()
        var logger = Logger(label: "sealed-push.gateway") {
            JSONLogHandler(label: $0, level: .info, metadataProvider: .init { ["node": "provided", "region": "eu"] }) {
                lines.append($0)
            }
        }
        logger[metadataKey: "node"] = "gw-1"
        logger[metadataKey: "hb.request.id"] = "7f3a"
        let before = Date()
        logger.info("sent \"quoted\"\nand a second line", metadata: ["job": "12", "region": "us", "ids": ["a", "b"], "more": ["k": "v"]])
        logger.debug("not written")
        logger.warning("lease lost", error: Failure())
        let written = lines.written
        #expect(written.count == 2)
        #expect(written.allSatisfy { $0.hasSuffix("}\n") && $0.dropLast().firstIndex(of: "\n") == nil }, "one line each")

        let first = try object(written[0])
        #expect(first["level"] as? String == "info")
        #expect(first["label"] as? String == "sealed-push.gateway")
        #expect(first["message"] as? String == "sent \"quoted\"\nand a second line")
        #expect((first["source"] as? String)?.isEmpty == false)
        let time = try #require(first["time"] as? String)
        #expect(time.hasSuffix("Z"), "\(time)")
        let stamp = try #require(try? Date(time, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        #expect(abs(stamp.timeIntervalSince(before)) < 60)
        let metadata = try #require(first["metadata"] as? [String: Any])
        // The provider's value wins over the logger's, the line's over both (swift-log's stream handler's order).
        #expect(metadata["node"] as? String == "provided")
        #expect(metadata["region"] as? String == "us")
        #expect(metadata["hb.request.id"] as? String == "7f3a" && metadata["job"] as? String == "12")
        #expect(metadata["ids"] as? [String] == ["a", "b"])
        #expect((metadata["more"] as? [String: String]) == ["k": "v"])

        let second = try object(written[1])
        #expect(second["level"] as? String == "warning")
        let errorMetadata = try #require(second["metadata"] as? [String: Any])
        #expect(errorMetadata["error.message"] as? String == "store call timed out")
        #expect((errorMetadata["error.type"] as? String)?.hasSuffix("Failure") == true)
    }

    @Test func aLineWithoutMetadataHasNoMetadataMember() throws {
        let lines = Lines()
        let logger = Logger(label: "x") { JSONLogHandler(label: $0, level: .trace) { lines.append($0) } }
        logger.notice("started")
        let line = try object(try #require(lines.written.first))
        #expect(line["metadata"] == nil)
        #expect(Set(line.keys) == ["time", "level", "label", "source", "message"])
    }
}
