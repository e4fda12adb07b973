import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `/healthz` of the real `sealed-push-gateway serve` reflects whether the database takes writes (audit findings 7
/// and 8): `503` naming the problem once the SQLite file is deleted (and writes are refused, not lost), or once
/// writes fail; `200` again once they work.
@Suite("Gateway process: readiness", .serialized)
struct HealthProcessTests {
    /// Polls `/healthz` until `accept` takes the answer (at most 15 s); returns the last answer.
    static func waitForHealth(
        _ client: HTTPTestClient, _ accept: (Int, String) -> Bool
    ) async throws -> (status: Int, body: String) {
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        var last = (status: 0, body: "")
        while ContinuousClock.now < deadline {
            let answer = try await client.send("GET", "/healthz")
            last = (answer.status, answer.text)
            if accept(last.status, last.body) { return last }
            try await Task.sleep(for: .milliseconds(200))
        }
        return last
    }

    @Test func deletedDatabaseMakesHealthUnavailableAndRefusesWrites() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let logPath = setup.directory.appendingPathComponent("serve.log").path
        let gateway = try await GatewayProcess.start(config: setup.configPath, environment: setup.environment, logPath: logPath)
        let client = HTTPTestClient(port: gateway.port)
        _ = try await setup.register(1, client: client)
        #expect(try await client.send("GET", "/healthz").status == 200)

        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: setup.databasePath + suffix) }
        let health = try await Self.waitForHealth(client) { status, _ in status == 503 }
        #expect(health.status == 503, "\(health.body)")
        #expect(health.body.contains("database file deleted"), "\(health.body)")
        // Not ready, yet alive: restarting the process would not bring the file back.
        let alive = try await client.send("GET", "/livez")
        #expect(alive.status == 200 && alive.text == #"{"status":"ok"}"#, "\(alive.status) \(alive.text)")
        // A write is refused (it would go to the deleted file and be lost at the next start), not accepted.
        let registration = try? await setup.register(2, client: client)
        #expect(registration == nil, "a registration was accepted into a deleted database")
        try await Task.sleep(for: .seconds(3))  // a heartbeat or two
        #expect(try await gateway.terminate() == 0)
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(log.contains("error") && log.contains("database file deleted"), "\(GatewayProcess.tail(logPath))")
    }

    /// `chattr +i` makes the files unwritable even for root, like a read-only remount or a failing disk; root is
    /// needed for it.
    @Test(.enabled(if: getuid() == 0, "chattr needs root"))
    func unwritableDatabaseMakesHealthUnavailableUntilWritesWorkAgain() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer {
            Self.chattr("-i", [setup.databasePath, setup.databasePath + "-wal"])
            setup.removeFiles()
            Task { await setup.stop() }
        }
        let logPath = setup.directory.appendingPathComponent("serve.log").path
        let gateway = try await GatewayProcess.start(config: setup.configPath, environment: setup.environment, logPath: logPath)
        let client = HTTPTestClient(port: gateway.port)
        _ = try await setup.register(1, client: client)
        guard Self.chattr("+i", [setup.databasePath, setup.databasePath + "-wal"]) else {
            _ = try await gateway.terminate()
            return  // a file system without the immutable flag: nothing to check here
        }
        let failing = try await Self.waitForHealth(client) { status, _ in status == 503 }
        #expect(failing.status == 503, "\(failing.body)")
        #expect(failing.body.contains("not writable"), "\(failing.body)")

        Self.chattr("-i", [setup.databasePath, setup.databasePath + "-wal"])
        let recovered = try await Self.waitForHealth(client) { status, _ in status == 200 }
        #expect(recovered.status == 200, "\(recovered.body)")
        #expect(try await gateway.terminate() == 0)
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(log.contains("not ready"), "\(GatewayProcess.tail(logPath))")
    }

    @discardableResult
    static func chattr(_ flag: String, _ paths: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag] + paths
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
