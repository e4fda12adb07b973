import Foundation
import Logging
import PostgresNIO

/// A new database on the server `SEALEDPUSH_TEST_POSTGRES_URL` names (`scripts/postgres-test.sh start`), dropped
/// afterwards — as the store tests make theirs.
struct PostgresTestDatabase: Sendable {
    /// The server's URL, or nil when PostgreSQL tests are not configured.
    static let serverURL: String? = ProcessInfo.processInfo.environment["SEALEDPUSH_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }

    let name: String
    let url: String

    static func create() async throws -> PostgresTestDatabase {
        guard let server = serverURL, var components = URLComponents(string: server) else {
            throw TestFailure("SEALEDPUSH_TEST_POSTGRES_URL is not set")
        }
        let name = "sp_http_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await withClient(url: server) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        components.path = "/" + name
        return PostgresTestDatabase(name: name, url: components.string!)
    }

    /// Every row of every table, as text (`bytea` renders as `\x` + hex).
    func rawContents() async throws -> [(name: String, bytes: [UInt8])] {
        try await Self.withClient(url: url) { client in
            var tables: [String] = []
            for try await table in try await client.query(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            ).decode(String.self) {
                tables.append(table)
            }
            var contents: [(name: String, bytes: [UInt8])] = []
            for table in tables {
                var text = ""
                for try await row in try await client.query(PostgresQuery(unsafeSQL: "SELECT t::text FROM \(table) t"))
                    .decode(String.self)
                {
                    text += row + "\n"
                }
                contents.append((name: table, bytes: Array(text.utf8)))
            }
            return contents
        }
    }

    func drop() async throws {
        try await Self.withClient(url: Self.serverURL!) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }

    private static func withClient<T: Sendable>(url: String, _ body: (PostgresClient) async throws -> T) async throws -> T {
        let components = URLComponents(string: url)!
        let configuration = PostgresClient.Configuration(
            host: components.host!, port: components.port ?? 5432, username: components.user!,
            password: components.password, database: String(components.path.dropFirst()), tls: .disable)
        let client = PostgresClient(configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
