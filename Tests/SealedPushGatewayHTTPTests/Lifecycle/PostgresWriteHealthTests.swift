import Foundation
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// `/healthz` on PostgreSQL judges writes by the store's own writes, as on SQLite: a database that answers reads but
/// refuses writes (a standby after a failover, `default_transaction_read_only`) makes it `503 not writable` naming the
/// server's `SQLSTATE`, on a node that does not deliver (no heartbeat) too; `200` again once a write works.
@Suite("PostgreSQL write health", .serialized)
struct PostgresWriteHealthTests {
    /// Regression: with the database read-only, every registration failed while `/healthz` said ready (`200`): only
    /// the ping, a read, was asked.
    @Test(.enabled(if: PostgresTestDatabase.serverURL != nil, "SEALEDPUSH_TEST_POSTGRES_URL is not set"))
    func readOnlyDatabaseIsNotReady() async throws {
        try await GatewayTestServer.with(.postgres) { server in
            let database = try #require(server.postgres)
            try await server.registerDevice("before")
            #expect(try await server.client.send("GET", "/healthz").status == 200)

            // Writes refused from now on; the store's open sessions end, so its next ones start read-only.
            try await Self.setReadOnly(true, database)
            let failing = try await Self.poll(server) { status, body in status == 503 && body.contains("25006") }
            #expect(failing.status == 503, "\(failing.body)")
            #expect(failing.body.contains("not writable: SQLSTATE 25006"), "\(failing.body)")
            #expect(server.store.writeProblem?.contains("read-only") == true, "\(server.store.writeProblem ?? "nil")")
            #expect(
                server.logs.text.split(separator: "\n").contains { $0.contains("not ready") && $0.contains("25006") },
                "the change to not ready was not logged")

            try await Self.setReadOnly(false, database)
            let recovered = try await Self.poll(server) { status, _ in status == 200 }
            #expect(recovered.status == 200, "\(recovered.body)")
            #expect(server.store.writeProblem == nil)
        }
    }

    /// Sets or resets `default_transaction_read_only` for the database and ends the other sessions on it.
    static func setReadOnly(_ readOnly: Bool, _ database: PostgresTestDatabase) async throws {
        try await database.executeOnServer(
            readOnly
                ? "ALTER DATABASE \(database.name) SET default_transaction_read_only = on"
                : "ALTER DATABASE \(database.name) RESET default_transaction_read_only")
        try await database.executeOnServer(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database.name)'")
    }

    /// Tries a registration (a write) and reads `/healthz` until `accept` takes the answer (at most 15 s).
    static func poll(
        _ server: GatewayTestServer, _ accept: (Int, String) -> Bool
    ) async throws -> (status: Int, body: String) {
        var last = (status: 0, body: "")
        let deadline = ContinuousClock.now + .seconds(15)
        var attempt = 0
        while ContinuousClock.now < deadline {
            attempt += 1
            _ = try? await server.registerDevice("probe-\(attempt)")
            let answer = try await server.client.send("GET", "/healthz")
            last = (answer.status, answer.text)
            if accept(last.status, last.body) { return last }
            try await Task.sleep(for: .milliseconds(200))
        }
        return last
    }
}
