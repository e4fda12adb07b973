import ArgumentParser
import Foundation
import SealedPushCore

/// Small I/O helpers shared by the subcommands.
enum CLIIO {
    /// Reads a whole file, or standard input when `path` is nil or "-", with a size cap.
    static func read(_ path: String?, limit: Int = 1 << 20, what: String = "input") throws -> [UInt8] {
        let data: Data
        if let path, path != "-" {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw SealedPushError(.io, "cannot open \(what) file \(path)")
            }
            defer { try? handle.close() }
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } else {
            data = try FileHandle.standardInput.read(upToCount: limit + 1) ?? Data()
        }
        guard data.count <= limit else {
            throw SealedPushError(.invalidArgument, "\(what) is larger than \(limit) bytes")
        }
        return Array(data)
    }

    /// Reads a payload and strips one trailing newline (shells add one).
    static func readPayload(_ path: String?) throws -> [UInt8] {
        var bytes = try read(path, limit: 64 * 1024, what: "payload")
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        return bytes
    }

    static func writeStdout(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func writeStderr(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Parses `--now`: ISO 8601 or UNIX seconds; the current time when nil.
    static func parseNow(_ text: String?) throws -> UInt64 {
        guard let text else { return UInt64(Date().timeIntervalSince1970) }
        if let seconds = UInt64(text) { return seconds }
        let date = try DeviceRegistration.parseDate(text, field: "--now")
        guard date.timeIntervalSince1970 >= 0 else { throw SealedPushError(.invalidArgument, "--now is before 1970") }
        return UInt64(date.timeIntervalSince1970)
    }

    static func iso(_ seconds: UInt64) -> String {
        DeviceRegistration.formatDate(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

/// Runs a command body; on a ``SealedPushError`` prints `error: <code>: <message>` to stderr and exits 1.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as SealedPushError {
        CLIIO.writeStderr("error: \(error.code.name): \(error.message)\n")
        throw ExitCode(1)
    }
}
