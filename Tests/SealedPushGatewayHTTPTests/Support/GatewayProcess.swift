import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running `sealed-push-gateway serve` process: its bound port (read from its `listening on port N` line), its
/// standard error in a log file, and the means to stop it gracefully (SIGTERM) or kill it (SIGKILL).
final class GatewayProcess: @unchecked Sendable {
    let process: Process
    let port: Int
    let logPath: String

    /// Starts `serve --config config` with `environment` added to this process's, and waits (at most 60 s) for
    /// its port.
    static func start(config: String, environment: [String: String], logPath: String) async throws -> GatewayProcess {
        let process = Process()
        process.executableURL = GatewayExecutableTests.binary
        process.arguments = ["serve", "--config", config]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        process.standardOutput = out
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardError = log
        try process.run()
        let reader = out.fileHandleForReading
        let port: Int? = await withTaskGroup(of: Int?.self) { group in
            group.addTask {
                var buffer = Data()
                while true {
                    let chunk = reader.availableData
                    if chunk.isEmpty { return nil }
                    buffer.append(chunk)
                    let text = String(decoding: buffer, as: UTF8.self)
                    if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on port ") }) {
                        return Int(line.dropFirst("listening on port ".count))
                    }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let port else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw TestFailure("the gateway did not report its port; its log:\n" + Self.tail(logPath))
        }
        return GatewayProcess(process: process, port: port, logPath: logPath)
    }

    private init(process: Process, port: Int, logPath: String) {
        self.process = process
        self.port = port
        self.logPath = logPath
    }

    /// SIGTERM, then waits (at most `timeout`) for the exit; returns the exit status, nil if it did not exit.
    func terminate(timeout: Duration = .seconds(60)) async throws -> Int32? {
        kill(process.processIdentifier, SIGTERM)
        return try await waitForExit(timeout: timeout)
    }

    /// SIGKILL (no chance to finish anything), then waits for the process to be gone.
    func killNow() async throws {
        kill(process.processIdentifier, SIGKILL)
        _ = try await waitForExit(timeout: .seconds(30))
    }

    private func waitForExit(timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { return nil }
        return process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus
    }

    /// The end of the log, for failure messages.
    static func tail(_ path: String, bytes: Int = 4_000) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "(no log)" }
        return String(decoding: data.suffix(bytes), as: UTF8.self)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
