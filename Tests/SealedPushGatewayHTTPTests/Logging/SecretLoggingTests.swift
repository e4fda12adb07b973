import Foundation
import Logging
import Prometheus
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushGatewayTestSupport
import Testing

/// No secret of the process reaches the log at any level: the service group (swift-service-lifecycle logs its
/// services at `debug` when it starts) names each service by its type, never by its reflected contents — the
/// process environment a ``ReloadService`` keeps, the configuration with its database URL — and a configuration
/// logged on purpose shows its database URL without the password.
@Suite("Gateway logs: no secrets", .serialized)
struct SecretLoggingTests {
    static let environmentSecret = "hunter2-EXAMPLE-env-secret"
    static let databasePassword = "pg-EXAMPLE-db-password"

    /// `serve`'s services in their group, logged at `trace` from start to graceful shutdown.
    @Test func theServiceGroupLogsNoEnvironmentOrDatabasePassword() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gwlog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let logs = CapturedLogs()
        let store = try SQLiteGatewayStore(path: directory.appendingPathComponent("gateway.sqlite").path)
        _ = try await store.migrate()
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let http = GatewayHTTPServer(
            configuration: GatewayHTTPConfiguration(host: "127.0.0.1", port: 0),
            store: store, metrics: GatewayMetrics(registry: PrometheusCollectorRegistry()),
            logger: logs.logger(label: "http"), onListening: { portSink.yield($0) })
        let loaded = GatewayConfiguration(
            database: "postgres://gateway:\(Self.databasePassword)@db.internal:5432/gateway?sslmode=require")
        let reload = ReloadService(
            tls: nil, configurationPath: directory.appendingPathComponent("gateway.json").path,
            environment: ["DB_PASSWORD": Self.environmentSecret, "PATH": "/usr/bin"], loaded: loaded, server: http,
            logger: logs.logger(label: "reload"))
        let group = GatewayServiceGroup.make(
            store: store, http: http, extraServices: [reload], signals: [], logger: logs.logger(label: "group"))
        let running = Task { try await group.run() }
        for await _ in ports { break }
        await group.triggerGracefulShutdown()
        try await running.value

        let text = logs.text
        #expect(text.contains("Starting service lifecycle"), "the group's debug lines were not captured:\n\(text)")
        #expect(text.contains("ReloadService"), "\(text)")
        #expect(!text.contains(Self.environmentSecret), "\(text)")
        #expect(!text.contains(Self.databasePassword), "\(text)")
        #expect(!text.contains("DB_PASSWORD"), "\(text)")
    }

    /// A configuration or a ``ReloadService`` put in a log line on purpose shows the database URL without its
    /// password, and never the environment.
    @Test func descriptionsRedactTheDatabasePassword() throws {
        let configuration = GatewayConfiguration(
            database: "postgres://gateway:\(Self.databasePassword)@db.internal:5432/gateway?sslmode=require&password=q-EXAMPLE")
        let text = "\(configuration)"
        #expect(!text.contains(Self.databasePassword) && !text.contains("q-EXAMPLE"), "\(text)")
        #expect(text.contains("postgres://gateway:***@db.internal:5432/gateway?sslmode=require&password=***"), "\(text)")
        #expect(GatewayConfiguration.redactedDatabase("sqlite:/var/lib/gw/gateway.sqlite") == "sqlite:/var/lib/gw/gateway.sqlite")
        #expect(GatewayConfiguration.redactedDatabase("postgres://gateway@db/gw") == "postgres://gateway@db/gw")
        #expect(GatewayConfiguration.redactedDatabase("postgres://u:p%40ss@db/gw") == "postgres://u:***@db/gw")
    }
}
