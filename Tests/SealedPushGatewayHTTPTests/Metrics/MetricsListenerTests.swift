import Foundation
import Prometheus
import SealedPushGateway
import SealedPushGatewayHTTP
import Testing

/// The metrics listener (`metricsListen`) makes the API's HTTP/1.1 checks too (stop 49: it served a request without
/// `Host`, kept HTTP/1.0 connections open and answered an unknown method `400` without naming it).
@Suite("Gateway HTTP: the metrics listener")
struct MetricsListenerTests {
    @Test func theListenerChecksEachRequestAsTheAPIDoes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteGatewayStore(path: directory.appendingPathComponent("gateway.sqlite").path)
        _ = try await store.migrate()
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let server = GatewayMetricsServer(
            host: "127.0.0.1", port: 0, store: store, metrics: GatewayMetrics(registry: PrometheusCollectorRegistry()),
            onListening: { portSink.yield($0) })
        let running = Task { try await server.run() }
        defer { running.cancel() }
        var port = 0
        for await bound in ports {
            port = bound
            break
        }
        let noHost = try await HTTPConformanceTests.exchange(port: port, "GET /metrics HTTP/1.1\r\n\r\n")
        #expect(try noHost.single("no Host").status == 400)
        let unknown = try await HTTPConformanceTests.exchange(port: port, "FOO /metrics HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try unknown.single("FOO").status == 501)
        let head = try await HTTPConformanceTests.exchange(
            port: port, "HEAD /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", heads: [true])
        let answer = try head.single("HEAD")
        #expect(answer.status == 200)
        #expect(answer.body.isEmpty)
        try await store.close()
    }
}
