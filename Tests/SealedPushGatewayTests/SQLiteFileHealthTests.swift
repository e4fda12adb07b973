import Foundation
import SealedPushGateway
import Testing

/// The SQLite store's file and write health (audit findings 7 and 8): only an existing database is opened for
/// serving, and a file deleted or replaced while open refuses writes and says so; readiness reads it without a
/// write of its own.
@Suite("SQLite store: file and write health")
struct SQLiteFileHealthTests {
    @Test func aMissingDatabaseIsRefusedNamingInit() throws {
        let harness = try SQLiteHarness()
        defer { try? FileManager.default.removeItem(at: harness.directory) }
        #expect {
            try SQLiteGatewayStore.requireExistingDatabase(at: harness.path)
        } throws: { error in
            guard let error = error as? GatewayStoreError else { return false }
            return error.message.contains(harness.path) && error.message.contains("sealed-push-gateway init")
        }
        #expect(!FileManager.default.fileExists(atPath: harness.path))
    }

    @Test func anExistingDatabaseIsAccepted() async throws {
        let harness = try SQLiteHarness()
        defer { try? FileManager.default.removeItem(at: harness.directory) }
        let store = try SQLiteGatewayStore(path: harness.path)
        _ = try await store.migrate()
        try await store.close()
        try SQLiteGatewayStore.requireExistingDatabase(at: harness.path)
    }

    @Test func aDeletedFileRefusesWritesAndIsReported() async throws {
        let harness = try SQLiteHarness()
        defer { try? FileManager.default.removeItem(at: harness.directory) }
        let store = try SQLiteGatewayStore(path: harness.path)
        _ = try await store.migrate()
        try await store.putApp(StoreFixtures.app("alpha"), now: StoreFixtures.now)
        #expect(store.writeProblem == nil)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: harness.path + suffix) }
        try await Task.sleep(for: .milliseconds(1_100))  // the path is looked at again at most once a second
        #expect(store.writeProblem == "database file deleted")
        await #expect {
            try await store.putApp(StoreFixtures.app("beta"), now: StoreFixtures.now)
        } throws: { error in
            "\(error)".contains("database file deleted") && "\(error)".contains(harness.path)
        }
        try await store.close()
    }

    @Test func aReplacedFileIsReported() async throws {
        let harness = try SQLiteHarness()
        defer { try? FileManager.default.removeItem(at: harness.directory) }
        let store = try SQLiteGatewayStore(path: harness.path)
        _ = try await store.migrate()
        // A restore that puts another file in its place while the gateway runs.
        let other = harness.directory.appendingPathComponent("restored.sqlite").path
        let copy = try SQLiteGatewayStore(path: other)
        _ = try await copy.migrate()
        try await copy.close()
        #expect(rename(other, harness.path) == 0)
        try await Task.sleep(for: .milliseconds(1_100))
        #expect(store.writeProblem == "database file replaced")
        try await store.close()
    }

    @Test func writeHealthCountsFailuresUntilASuccessOrItsWindow() async throws {
        let health = StoreWriteHealth(failureWindow: .milliseconds(300))
        #expect(health.problem == nil)
        health.recordFailure("SQLITE_IOERR")
        #expect(health.problem == "SQLITE_IOERR")
        health.recordSuccess()
        #expect(health.problem == nil)
        health.recordFailure("SQLITE_FULL")
        try await Task.sleep(for: .milliseconds(400))
        #expect(health.problem == nil, "a failure outlived its window")
    }
}
