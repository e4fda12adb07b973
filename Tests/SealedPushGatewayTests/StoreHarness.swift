import Foundation
import SealedPushGateway
import SealedPushGatewayTestSupport

/// A fresh, empty database for one test, the stores that talk to it, and raw access to what it wrote.
protocol StoreHarness: Sendable {
    /// A new store on the test's database (like a new gateway node or a restarted process).
    func makeStore() async throws -> any GatewayStore
    /// Runs SQL directly, bypassing the store.
    func execute(_ sql: String) async throws
    /// Everything the database holds, as bytes a marker can be searched in (files, or table contents).
    func rawContents() async throws -> [(name: String, bytes: [UInt8])]
    /// Deletes the database.
    func tearDown() async throws
}

/// The SQLite database of a test: a real file in a fresh temporary directory.
struct SQLiteHarness: StoreHarness {
    let directory: URL
    var path: String { directory.appendingPathComponent("gateway.sqlite").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sealedpush-gateway-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func makeStore() async throws -> any GatewayStore { try SQLiteGatewayStore(path: path) }

    func execute(_ sql: String) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, sql]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw HarnessError("sqlite3 exited \(process.terminationStatus)") }
    }

    /// The database file and its `-wal` file, byte for byte.
    func rawContents() async throws -> [(name: String, bytes: [UInt8])] {
        try ["", "-wal"].compactMap { suffix in
            let file = path + suffix
            guard FileManager.default.fileExists(atPath: file) else { return nil }
            return (name: "gateway.sqlite\(suffix)", bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        }
    }

    func tearDown() async throws { try? FileManager.default.removeItem(at: directory) }
}

/// The PostgreSQL database of a test: a new database on the server `SEALEDPUSH_TEST_POSTGRES_URL` names
/// (`scripts/postgres-test.sh start`), dropped afterwards.
struct PostgresHarness: StoreHarness {
    /// The server's URL, or nil when PostgreSQL tests are not configured.
    static var serverURL: String? { PostgresTestDatabase.serverURL }

    let database: PostgresTestDatabase
    var url: String { database.url }

    init() async throws { database = try await PostgresTestDatabase.create() }

    func makeStore() async throws -> any GatewayStore { try PostgresGatewayStore(url: url) }
    func execute(_ sql: String) async throws { try await database.execute(sql) }
    func rawContents() async throws -> [(name: String, bytes: [UInt8])] { try await database.rawContents() }
    func tearDown() async throws { try await database.drop() }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Array where Element == UInt8 {
    /// True when `needle` occurs in these bytes.
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if Array(self[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }
}
