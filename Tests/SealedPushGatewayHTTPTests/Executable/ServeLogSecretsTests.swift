import Foundation
import SealedPushGateway
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension GatewayExecutableTests {
    /// The real `serve` at `logLevel` `trace`, with a secret in an environment variable (and, on PostgreSQL, a
    /// password in the database URL: the test cluster trusts loopback, so any password connects): neither reaches
    /// its log, from start to graceful shutdown.
    @Test(arguments: Backend.available)
    func serveLogsNoSecretAtTrace(_ backend: Backend) async throws {
        let secret = "hunter2-EXAMPLE-\(UUID().uuidString.prefix(8))"
        let password = "pg-EXAMPLE-\(UUID().uuidString.prefix(8))"
        try await Self.withInitializedGateway(backend) { config, directory, _ in
            if backend == .postgres {
                let url = URL(fileURLWithPath: config)
                let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
                var json = try #require(object as? [String: Any])
                let written = try #require(json["database"] as? String)
                var database = try #require(URLComponents(string: written))
                database.password = password
                json["database"] = database.string
                try JSONSerialization.data(withJSONObject: json).write(to: url)
            }
            // Standard error to a file: at trace, more than a pipe holds before anyone reads it.
            let logPath = directory.appendingPathComponent("serve.log").path
            let serve = try await GatewayProcess.start(
                config: config,
                environment: [
                    "SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:0", "SEALEDPUSH_GATEWAY_LOG_LEVEL": "trace",
                    "SEALEDPUSH_GATEWAY_DELIVERY": "off", "DB_PASSWORD": secret,
                ],
                logPath: logPath)
            let client = HTTPTestClient(port: serve.port)
            #expect(try await client.send("GET", "/healthz").status == 200)
            #expect(try await serve.terminate() == 0)
            let logged = String(decoding: try Data(contentsOf: URL(fileURLWithPath: logPath)), as: UTF8.self)
            #expect(logged.contains("Starting service lifecycle"), "no debug lines at trace:\n\(logged.suffix(2_000))")
            #expect(!logged.contains(secret), "the environment reached the log")
            #expect(!logged.contains(password), "the database password reached the log")
        }
    }
}
