import Foundation
import SealedPushCore
import SealedPushGateway
import Synchronization
import Testing

/// `SQLiteGatewayStore.backup(to:)`: a consistent, restorable copy of a database another process writes to meanwhile.
@Suite("SQLite online backup")
struct SQLiteBackupTests {
    /// Runs SQL on the database file from another process (the `sqlite3` shell), while the backup holds its snapshot.
    static func writeFromAnotherProcess(_ path: String, _ sql: String) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-cmd", ".timeout 10000", path, sql]
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func aCopyTakenDuringWritesIsTheSnapshotAndRestores() async throws {
        let harness = try SQLiteHarness()
        defer { try? FileManager.default.removeItem(at: harness.directory) }
        let store = try SQLiteGatewayStore(path: harness.path)
        _ = try await store.migrate()
        try await store.putApp(StoreFixtures.app("alpha"), now: StoreFixtures.now)
        let fixtures = try StoreFixtures()
        let keys = try await StoreFixtures.register((0..<20).map { "d\($0)" }, in: "alpha", store)
        var ids: [UUID] = []
        for index in 0..<300 {
            let notification = try fixtures.notification(appID: "alpha", to: [("d\(index % 20)"): keys["d\(index % 20)"]!])
            _ = try await store.enqueue(notification)
            ids.append(notification.id)
        }
        let depth = try await store.queueDepth()

        // Small steps, and after the first one another process commits an app: the copy is the snapshot the backup
        // started from (no `gamma`), and the backup finishes rather than restarting.
        let destination = harness.directory.appendingPathComponent("backup.sqlite").path
        let steps = Mutex<[(Int, Int)]>([])
        let written = Mutex<Int32?>(nil)
        let path = harness.path
        let (pages, pageSize) = try await store.backup(to: destination, pagesPerStep: 8) { copied, total in
            steps.withLock { $0.append((copied, total)) }
            if written.withLock({ $0 }) == nil {
                let status = Self.writeFromAnotherProcess(
                    path,
                    "CREATE TEMP TABLE copied AS SELECT * FROM apps WHERE id = 'alpha'; UPDATE copied SET id = 'gamma'; "
                        + "INSERT INTO apps SELECT * FROM copied;")
                written.withLock { $0 = status }
            }
        }
        #expect(written.withLock { $0 } == 0, "the concurrent write did not commit")
        #expect(try await store.app(id: "gamma") != nil)
        let progress = steps.withLock { $0 }
        #expect(progress.count > 2, "\(progress.count) steps")
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.0 <= $1.0 })
        #expect(progress.last.map { $0.0 == $0.1 && $0.1 == pages } == true)
        try await store.close()

        // One file, 0600, nothing else left beside it.
        let attributes = try FileManager.default.attributesOfItem(atPath: destination)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((attributes[.size] as? NSNumber)?.intValue == pages * pageSize)
        let names = try FileManager.default.contentsOfDirectory(atPath: harness.directory.path)
        #expect(!names.contains { $0.contains("partial") || $0.hasPrefix("backup.sqlite-") }, "\(names)")

        // Restored: the copy opens as a gateway database at the same schema, with everything committed before it.
        let restored = try SQLiteGatewayStore(path: destination)
        #expect(try await restored.migrate() == 0)
        #expect(try await restored.app(id: "alpha") != nil)
        #expect(try await restored.app(id: "gamma") == nil)
        #expect(try await restored.queueDepth() == depth)
        for id in [ids[0], ids[149], ids[299]] {
            #expect(try await restored.notificationStatus(appID: "alpha", notificationID: id) != nil)
        }
        try await restored.close()
    }

    @Test func anExistingNameIsNeverReplaced() async throws {
        let harness = try SQLiteHarness()
        defer { try? FileManager.default.removeItem(at: harness.directory) }
        let store = try SQLiteGatewayStore(path: harness.path)
        _ = try await store.migrate()
        let existing = harness.directory.appendingPathComponent("taken").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        let link = harness.directory.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: harness.directory.appendingPathComponent("nowhere").path)
        for destination in [existing, link] {
            await #expect(throws: GatewayStoreError.self) { _ = try await store.backup(to: destination) }
        }
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
        #expect(!FileManager.default.fileExists(atPath: harness.directory.appendingPathComponent("nowhere").path))
        let missingDirectory = harness.directory.appendingPathComponent("no/such/dir/b.sqlite").path
        await #expect(throws: GatewayStoreError.self) { _ = try await store.backup(to: missingDirectory) }
        try await store.close()
        let names = try FileManager.default.contentsOfDirectory(atPath: harness.directory.path)
        #expect(!names.contains { $0.contains("partial") }, "\(names)")
    }
}
