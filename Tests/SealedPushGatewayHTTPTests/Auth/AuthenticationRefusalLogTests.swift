import Foundation
import Logging
import SealedPushGatewayTestSupport
import Testing

@testable import SealedPushGatewayHTTP

/// Refused API keys leave a log line an operator can act on (ops audit, finding 12: no line at any level, even
/// `trace`): the reason, the app, the presented key's public id — never its secret — and the client's address, at
/// most one line every 10 s, the next saying how many were refused meanwhile.
@Suite("Gateway HTTP: refused API keys are logged")
struct AuthenticationRefusalLogTests {
    @Test func anUnknownKeyIsLoggedOnceWithoutItsSecret() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let guess = "sp_00000000000000aa_" + String(repeating: "G", count: 43)
            for _ in 0..<5 {
                let answer = try await server.client.send("GET", "/v1/apps/app1/devices/x", key: guess)
                #expect(answer.status == 401)
            }
            let lines = server.logs.text.split(separator: "\n").filter { $0.contains("API key refused") }
            #expect(lines.count == 1, "\(lines)")
            let line = String(lines.first ?? "")
            #expect(line.hasPrefix("notice "), "\(line)")
            #expect(line.contains("00000000000000aa") && line.contains("no such key"), "\(line)")
            #expect(line.contains("app1") && line.contains("127.0.0.1"), "\(line)")
            #expect(!server.logs.text.contains(String(repeating: "G", count: 43)))
        }
    }

    @Test func anotherAppsKeyIsLoggedAsSuch() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let other = try #require(server.keys["app2"])
            let answer = try await server.client.send("GET", "/v1/apps/app1/devices/x", key: other)
            #expect(answer.status == 403)
            let line = server.logs.text.split(separator: "\n").first { $0.contains("API key refused") }
            #expect(line?.contains("a key of another app") == true, "\(String(describing: line))")
            #expect(line.map { !$0.contains(other) } == true)
        }
    }

    /// After the interval, the next line says how many refusals were not written.
    @Test func theNextLineCountsTheRefusalsNotWritten() async throws {
        let logs = CapturedLogs()
        let refusals = AuthenticationRefusals(logger: logs.logger(label: "t"), interval: .milliseconds(200))
        for _ in 0..<4 { refusals.record(.malformed, appID: "app1", keyID: nil, client: "192.0.2.1") }
        #expect(logs.text.split(separator: "\n").count == 1)
        try await Task.sleep(for: .milliseconds(300))
        refusals.record(.missing, appID: "../x", keyID: nil, client: "192.0.2.1")
        let lines = logs.text.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(logs.lines.last?.metadata["refusedSinceLastLine"] == "3", "\(lines)")
        #expect(lines.last?.contains("(not an app id)") == true, "\(lines)")
    }
}
