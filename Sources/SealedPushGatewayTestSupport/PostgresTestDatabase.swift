import Foundation
import Logging
import PostgresNIO

/// A new, empty database for one test on the PostgreSQL server `SEALEDPUSH_TEST_POSTGRES_URL` names
/// (`scripts/postgres-test.sh start`), raw access to what was written to it, and its removal afterwards. Shared by
/// the gateway's store, delivery and HTTP tests.
public struct PostgresTestDatabase: Sendable {
    /// The server's URL, or nil when PostgreSQL tests are not configured.
    public static let serverURL: String? = ProcessInfo.processInfo.environment["SEALEDPUSH_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// The database's name.
    public let name: String
    /// A URL for the database (the server's, with this database as its path).
    public let url: String

    /// Creates a database named `prefix` + a random suffix.
    /// - Throws: ``NotConfigured`` without `SEALEDPUSH_TEST_POSTGRES_URL`; the server's error.
    public static func create(prefix: String = "sp_test_") async throws -> PostgresTestDatabase {
        guard let server = serverURL, var components = URLComponents(string: server) else { throw NotConfigured() }
        let name = prefix + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await withClient(url: server) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        components.path = "/" + name
        return PostgresTestDatabase(name: name, url: components.string!)
    }

    /// Runs SQL on the database directly.
    public func execute(_ sql: String) async throws {
        try await Self.withClient(url: url) { client in _ = try await client.query(PostgresQuery(unsafeSQL: sql)) }
    }

    /// Runs SQL on the server's own database (the one `SEALEDPUSH_TEST_POSTGRES_URL` names), not on this one: for
    /// statements this database would refuse, such as undoing `default_transaction_read_only` on it.
    public func executeOnServer(_ sql: String) async throws {
        guard let server = Self.serverURL else { throw NotConfigured() }
        try await Self.withClient(url: server) { client in _ = try await client.query(PostgresQuery(unsafeSQL: sql)) }
    }

    /// Every row of every table, as text (`bytea` renders as `\x` + hex): what a marker can be searched in.
    public func rawContents() async throws -> [(name: String, bytes: [UInt8])] {
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

    /// Drops the database, closing its connections.
    public func drop() async throws {
        guard let server = Self.serverURL else { throw NotConfigured() }
        try await Self.withClient(url: server) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }

    /// `SEALEDPUSH_TEST_POSTGRES_URL` is not set.
    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String { "SEALEDPUSH_TEST_POSTGRES_URL is not set" }
    }

    private static func withClient<T: Sendable>(url: String, _ body: (PostgresClient) async throws -> T) async throws
        -> T
    {
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
