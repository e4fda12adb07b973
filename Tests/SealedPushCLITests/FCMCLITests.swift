import Foundation
import Testing

import SealedPushProxyTestSupport

/// `sealed-push fcm-emulator` and `sealed-push fcm-send` as real processes on loopback (issue 18 §2–3): OAuth from the
/// emulator's service-account file, HTTP/2 over TLS trusting only the emulator's certificate, retries under faults.
@Suite struct FCMCLITests {
    static let token = "fTok3nAbCdEf0123456789:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8k"
    static let goneToken = token + "gone"

    /// Starts the emulator and returns the process, its stdout and the port from its first line.
    func startEmulator(_ cli: CLITests, _ arguments: [String]) throws -> (Process, FileHandle, Int) {
        let process = Process()
        process.executableURL = CLITests.binary
        process.currentDirectoryURL = cli.directory
        process.arguments = [
            "fcm-emulator", "--port", "0", "--cert-out", cli.path("fcm-cert.pem"),
            "--service-account-out", cli.path("service-account.json"), "--project", "cli-test",
        ] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while let byte = try out.fileHandleForReading.read(upToCount: 1)?.first, byte != 0x0A { line.append(byte) }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: #"127\.0\.0\.1:(\d+) "#, options: .regularExpression) else {
            process.terminate()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "no port in \(text)"])
        }
        let port = Int(text[range].dropFirst("127.0.0.1:".count).dropLast())!
        return (process, out.fileHandleForReading, port)
    }

    func sendArguments(_ cli: CLITests, port: Int, token: String, devicePublic: String) -> [String] {
        [
            "fcm-send", "--service-account", cli.path("service-account.json"), "--endpoint", "https://127.0.0.1:\(port)",
            "--ca", cli.path("fcm-cert.pem"), "--token", token, "--application-id", "com.example.chat",
            "--server-key", cli.path("server.key"), "--device-public", devicePublic, "--title", "Dinner",
            "--body", "Table for two at 19:30",
        ]
    }

    func devicePublicKey(_ cli: CLITests) throws -> String {
        _ = try cli.run(["keygen", "--out", "server.key"])
        let registration = try cli.run(["device", "init", "--keyring", "ring.json"])
        let json = try JSONSerialization.jsonObject(with: Data(registration.stdout.utf8)) as? [String: Any]
        return try #require(json?["publicKey"] as? String)
    }

    @Test func sendsThroughFaultsAndCountsEveryNotification() throws {
        let cli = try CLITests()
        let device = try devicePublicKey(cli)
        // The first sends meet a 429, a 503 and a dropped connection; every notification still arrives once.
        let (emulator, output, port) = try startEmulator(cli, ["--fault-script", "429,503,reset", "--retry-after", "0"])
        let result = try cli.run(
            sendArguments(cli, port: port, token: Self.token, devicePublic: device) + ["--count", "300", "--concurrency", "16"])
        emulator.terminate()
        let summary = String(decoding: output.readDataToEndOfFile(), as: UTF8.self)
        emulator.waitUntilExit()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("delivered: 300/300"), "\(result.stdout)")
        #expect(result.stdout.contains("failed: 0"))
        // Progress goes to stderr, the summary to stdout; neither carries the content.
        #expect(result.stderr.contains("300/300 sent"))
        #expect(!(result.stdout + result.stderr).contains("Table for two"))
        // The emulator accepted each notification, after at least the three faulted requests. A dropped connection
        // may lose the answers of requests it had accepted: those are sent again byte for byte, which the emulator
        // counts as duplicates (the device's duplicate rule shows such a resend once).
        func figure(_ pattern: String) -> Int? {
            summary.range(of: pattern, options: .regularExpression).flatMap { Int(summary[$0].filter(\.isNumber)) }
        }
        let accepted = try #require(figure(#"\d+ accepted"#), "\(summary)")
        let duplicates = try #require(figure(#"\(\d+ duplicate\)"#), "\(summary)")
        #expect(accepted - duplicates == 300, "\(summary)")
        #expect((figure(#"\d+ sends"#) ?? 0) >= 303, "\(summary)")
    }

    @Test func anUnregisteredTokenFailsTheRunWithItsReason() throws {
        let cli = try CLITests()
        let device = try devicePublicKey(cli)
        let (emulator, _, port) = try startEmulator(cli, ["--unregistered", Self.goneToken])
        defer {
            emulator.terminate()
            emulator.waitUntilExit()
        }
        let result = try cli.run(sendArguments(cli, port: port, token: Self.goneToken, devicePublic: device))
        #expect(result.status == 1)
        #expect(result.stdout.contains("delivered: 0/1"), "\(result.stdout)")
        #expect(result.stdout.contains("unregistered=1"), "\(result.stdout)")
    }

    @Test func aReadableServiceAccountFileIsRefusedBeforeConnecting() throws {
        let cli = try CLITests()
        let device = try devicePublicKey(cli)
        let (emulator, output, port) = try startEmulator(cli, [])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: cli.path("service-account.json"))
        let result = try cli.run(sendArguments(cli, port: port, token: Self.token, devicePublic: device))
        emulator.terminate()
        let summary = String(decoding: output.readDataToEndOfFile(), as: UTF8.self)
        emulator.waitUntilExit()
        #expect(result.status == 1)
        #expect(result.stderr.contains("readable by others (mode 644): chmod 600"), "\(result.stderr)")
        #expect(!result.stderr.contains("PRIVATE KEY"))
        #expect(summary.contains("0 sends"), "\(summary)")
    }

    @Test func sendsThroughAProxyWithCredentialsFromAFile() async throws {
        let cli = try CLITests()
        let device = try devicePublicKey(cli)
        let expected = "Basic " + Data("cli:pa ss:wd".utf8).base64EncodedString()  // RFC 7617
        let proxy = try await ConnectProxy(policy: .requireAuthorization(expected))
        let (emulator, _, port) = try startEmulator(cli, [])
        defer {
            emulator.terminate()
            emulator.waitUntilExit()
        }
        let credentials = cli.path("proxy.credentials")
        #expect(FileManager.default.createFile(
            atPath: credentials, contents: Data("cli:pa ss:wd\n".utf8), attributes: [.posixPermissions: 0o600]))
        let proxied = sendArguments(cli, port: port, token: Self.token, devicePublic: device)
            + ["--proxy", "http://127.0.0.1:\(proxy.port)", "--proxy-credentials", credentials, "--count", "3"]
        let result = try cli.run(proxied)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("delivered: 3/3"), "\(result.stdout)")
        #expect(proxy.requests.map(\.target) == ["127.0.0.1:\(port)"])
        #expect(proxy.requests.allSatisfy { $0.opened && $0.authorization == expected })
        // A password on the command line is refused before anything connects.
        let inline = try cli.run(
            sendArguments(cli, port: port, token: Self.token, devicePublic: device)
                + ["--proxy", "http://cli:secret@127.0.0.1:\(proxy.port)"])
        // An error of the run (exit 1, `error: <code>:`), as a bad --endpoint is, not a usage error (64).
        #expect(inline.status == 1, "\(inline.stderr)")
        #expect(inline.stderr.contains("error: invalidArgument: --proxy must not hold a user or password"), "\(inline.stderr)")
        #expect(!inline.stderr.contains("secret"))
        #expect(!inline.stderr.contains("Usage:"), "\(inline.stderr)")
        // A credentials file that cannot be read: an error of the run naming the option.
        let missing = try cli.run(
            sendArguments(cli, port: port, token: Self.token, devicePublic: device)
                + ["--proxy", "http://127.0.0.1:\(proxy.port)", "--proxy-credentials", cli.path("no-such-file")])
        #expect(missing.status == 1, "\(missing.stderr)")
        #expect(missing.stderr.contains("error: io:") && missing.stderr.contains("--proxy-credentials"), "\(missing.stderr)")
        // Credentials without a proxy is how the options were combined: a usage error.
        let orphan = try cli.run(
            sendArguments(cli, port: port, token: Self.token, devicePublic: device)
                + ["--proxy-credentials", credentials])
        #expect(orphan.status == 64, "\(orphan.stderr)")
        #expect(orphan.stderr.contains("--proxy-credentials needs --proxy"), "\(orphan.stderr)")
        #expect(proxy.requests.count == 1)
        await proxy.stop()
    }
}
