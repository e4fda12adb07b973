import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the real `sealed-push-gateway serve` refuses at start (audit findings 6 and 7): a certificate outside its
/// validity, and a SQLite database that does not exist (only `init` creates one); and what it warns about (a
/// certificate about to expire).
@Suite("Gateway process: start-up checks", .serialized)
struct ServeStartChecksTests {
    /// Runs the gateway with arguments; a process still running after `timeout` is killed (status nil): the code
    /// before these checks served the refused files.
    static func run(
        _ arguments: [String], environment: [String: String], timeout: Duration = .seconds(15)
    ) async throws -> (status: Int32?, stderr: String) {
        let process = Process()
        process.executableURL = GatewayExecutableTests.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let handle = err.fileHandleForReading
        let reader = Task.detached { handle.readDataToEndOfFile() }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        var status: Int32?
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        } else {
            status = process.terminationStatus
        }
        process.waitUntilExit()
        return (status, String(decoding: await reader.value, as: UTF8.self))
    }

    @Test func refusesAnExpiredCertificateNamingTheFileAndDates() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let expired = try TLSCertificateValidityTests.DatedCertificate.make(
            in: setup.directory, name: "expired", from: Date(timeIntervalSince1970: 1_577_836_800),  // 2020-01-01
            until: Date(timeIntervalSince1970: 1_580_515_200))  // 2020-02-01
        try GatewayTLSProcessTests.configure(
            setup, ["tls": ["certificateFile": expired.certificate, "keyFile": expired.key]])
        let result = try await Self.run(["serve", "--config", setup.configPath], environment: setup.environment)
        #expect(result.status == 1, "serve exit \(String(describing: result.status)): \(result.stderr)")
        #expect(result.stderr.contains(expired.certificate), "\(result.stderr)")
        #expect(result.stderr.contains("expired") && result.stderr.contains("2020-02-01"), "\(result.stderr)")
    }

    @Test func warnsOfACertificateExpiringWithinFourteenDays() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let soon = try TLSCertificateValidityTests.DatedCertificate.make(
            in: setup.directory, name: "soon", from: Date().addingTimeInterval(-86_400),
            until: Date().addingTimeInterval(5 * 86_400), serial: "1A00050F")
        try GatewayTLSProcessTests.configure(setup, ["tls": ["certificateFile": soon.certificate, "keyFile": soon.key]])
        let logPath = setup.directory.appendingPathComponent("serve.log").path
        let gateway = try await GatewayProcess.start(config: setup.configPath, environment: setup.environment, logPath: logPath)
        try await GatewayTLSProcessTests.waitForLog(logPath, "serving HTTPS")
        #expect(try await gateway.terminate() == 0)
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(log.contains("TLS certificate expires soon"), "\(GatewayProcess.tail(logPath))")
        #expect(log.contains("1A00050F"), "the serial as openssl prints it: \(GatewayProcess.tail(logPath))")
    }

    @Test func refusesAMissingSQLiteDatabaseAndCreatesNone() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer { setup.removeFiles(); Task { await setup.stop() } }
        // The restore procedure's mistake: the database moved away and nothing put back.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: setup.databasePath + suffix) }
        let result = try await Self.run(["serve", "--config", setup.configPath], environment: setup.environment)
        #expect(result.status == 1, "serve exit \(String(describing: result.status)): \(result.stderr)")
        #expect(result.stderr.contains(setup.databasePath), "\(result.stderr)")
        #expect(result.stderr.contains("sealed-push-gateway init"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: setup.databasePath), "serve created an empty database")
    }

    /// The node-in-use refusal names the setting that exists (audit finding 13): `delivery.nodeStaleSeconds`.
    @Test func nodeInUseNamesTheRealSetting() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let first = try await GatewayProcess.start(
            config: setup.configPath, environment: setup.environment,
            logPath: setup.directory.appendingPathComponent("first.log").path)
        let second = try await Self.run(["serve", "--config", setup.configPath], environment: setup.environment)
        #expect(try await first.terminate() == 0)
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("delivery.nodeStaleSeconds"), "\(second.stderr)")
        #expect(!second.stderr.contains("nodeStaleAfter"), "\(second.stderr)")
    }
}
