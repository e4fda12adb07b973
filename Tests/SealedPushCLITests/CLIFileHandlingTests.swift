import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the CLI reads and writes the files it is given (outside CLI audit M5, L1, L2, L4, L9, L10): a typed error that
/// names the option and the file and says what is wrong, exit status 1, never a usage error or a raw Foundation error;
/// an existing output kept unless `--force`; no hang on a FIFO; no write through a symbolic link.
@Suite struct CLIFileHandlingTests {
    static let token = String(repeating: "ab", count: 32)

    /// A command line run with a deadline: a process still running when it passes is stopped (SIGTERM, then SIGKILL)
    /// and reported as timed out, so a command that hangs fails the test instead of hanging it. With `until`, a
    /// server is stopped as soon as its standard output contains that text (it is then also reported as timed out).
    struct TimedResult {
        var status: Int32
        var stdout: String
        var stderr: String
        var timedOut: Bool
    }

    func run(_ cli: CLITests, _ arguments: [String], timeout: TimeInterval = 20, until: String? = nil) throws
        -> TimedResult
    {
        let outputs = FileManager.default.temporaryDirectory
            .appendingPathComponent("sealed-push-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outputs) }
        let outURL = outputs.appendingPathComponent("stdout"), errURL = outputs.appendingPathComponent("stderr")
        #expect(FileManager.default.createFile(atPath: outURL.path, contents: nil))
        #expect(FileManager.default.createFile(atPath: errURL.path, contents: nil))
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = arguments
        process.currentDirectoryURL = cli.directory
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline {
            if let until, let out = try? Data(contentsOf: outURL),
                String(decoding: out, as: UTF8.self).contains(until)
            {
                break
            }
            usleep(20_000)
        }
        let timedOut = process.isRunning
        if timedOut {
            process.terminate()
            let grace = Date().addingTimeInterval(5)
            while process.isRunning, Date() < grace { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        return TimedResult(
            status: process.terminationStatus,
            stdout: String(decoding: (try? Data(contentsOf: outURL)) ?? Data(), as: UTF8.self),
            stderr: String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self), timedOut: timedOut)
    }

    /// A server key, a key ring, a device key file and a payload sealed to the key ring.
    struct Fixture {
        var serverPublic: String
        var ringPublic: String
        var devicePublic: String
    }

    func fixture(_ cli: CLITests) throws -> Fixture {
        let serverPublic = try cli.run(["keygen", "--out", "server.key"]).stdout.trimmingCharacters(in: .newlines)
        let registration = try cli.run(["device", "init", "--keyring", "ring"])
        let ringPublic = try #require(
            try JSONSerialization.jsonObject(with: Data(registration.stdout.utf8)) as? [String: Any])["publicKey"] as? String
        let devicePublic = try cli.run(["keygen", "--out", "device.key"]).stdout.trimmingCharacters(in: .newlines)
        let sealed = try cli.run([
            "seal", "--server-key", "server.key", "--device-public", try #require(ringPublic), "--topic", "t.example",
            "--body", "hello",
        ])
        #expect(sealed.status == 0, "\(sealed.stderr)")
        try sealed.stdout.write(toFile: cli.path("payload.json"), atomically: true, encoding: .utf8)
        let toDevice = try cli.run([
            "seal", "--server-key", "server.key", "--device-public", devicePublic, "--topic", "t.example", "--body", "hi",
        ])
        try toDevice.stdout.write(toFile: cli.path("device-payload.json"), atomically: true, encoding: .utf8)
        return Fixture(serverPublic: serverPublic, ringPublic: try #require(ringPublic), devicePublic: devicePublic)
    }

    /// M5: `fcm-emulator --service-account-out` replaced an existing file (possibly the real service account) with a
    /// freshly generated key. An existing file (or link) is kept, and named, unless `--force`, as `apns-keygen` does.
    @Test func fcmEmulatorKeepsAnExistingServiceAccountUnlessForced() throws {
        let cli = try CLITests()
        let original = Data(#"{"type":"service_account","project_id":"production"}"#.utf8)
        try original.write(to: URL(fileURLWithPath: cli.path("real-sa.json")))
        let arguments = ["fcm-emulator", "--port", "0", "--cert-out", "fcm.pem", "--service-account-out", "real-sa.json"]
        let refused = try run(cli, arguments)
        #expect(!refused.timedOut, "the emulator started over an existing service-account file")
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("error: io: "), "\(refused.stderr)")
        #expect(refused.stderr.contains("real-sa.json") && refused.stderr.contains("--force"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("Usage:"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.path("real-sa.json"))) == original)
        // A dangling link is an existing output too: neither it nor where it points is written.
        try FileManager.default.createSymbolicLink(atPath: cli.path("link-sa.json"), withDestinationPath: "nowhere.json")
        let link = try run(
            cli, ["fcm-emulator", "--port", "0", "--cert-out", "fcm.pem", "--service-account-out", "link-sa.json"])
        #expect(!link.timedOut && link.status == 1, "\(link.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("nowhere.json")))

        // With --force the file is replaced by the emulator's account (the emulator then runs until stopped).
        let forced = try run(cli, arguments + ["--force"], timeout: 60, until: "listening on")
        #expect(forced.stdout.contains("FCM emulator listening on"), "\(forced.stderr)")
        let written = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cli.path("real-sa.json"))))
                as? [String: Any])
        #expect(written["project_id"] as? String == "sealedpush-emulator")
    }

    /// L1: `device replay-state --reset` on a missing directory said "replay state reset" and exited 0; nothing was
    /// reset. It fails naming the directory, and creates nothing.
    @Test func replayStateResetOnAMissingDirectoryFails() throws {
        let cli = try CLITests()
        let result = try cli.run(["device", "replay-state", "--keyring", "no-such-ring", "--reset"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("error: io: "), "\(result.stderr)")
        #expect(result.stderr.contains("no-such-ring") && result.stderr.contains("does not exist"), "\(result.stderr)")
        #expect(!result.stdout.contains("reset"))
        #expect(!FileManager.default.fileExists(atPath: cli.path("no-such-ring")))
        // An existing key ring is still reset.
        #expect(try cli.run(["device", "init", "--keyring", "ring"]).status == 0)
        let reset = try cli.run(["device", "replay-state", "--keyring", "ring", "--reset"])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(reset.stdout == "replay state reset in ring\n")
    }

    /// L2: a directory given to a file option gave `Error Domain=NSCocoaErrorDomain Code=256 "(null)"`. Every file
    /// option says which option and file, and what is wrong: a directory or FIFO is not a regular file, a missing
    /// file does not exist, an oversized one names its limit.
    @Test func unreadableInputFilesGetTypedErrorsNamingTheFile() throws {
        let cli = try CLITests()
        let keys = try fixture(cli)
        try FileManager.default.createDirectory(atPath: cli.path("d1"), withIntermediateDirectories: false)
        #expect(try cli.run(["apns-keygen", "--out", "a.p8"]).status == 0)
        let send = ["send", "--endpoint", "https://127.0.0.1:1", "--key-id", "ABC1234567", "--team-id", "TEAM123456",
                    "--topic", "t.example", "--token", Self.token]
        // `--device-key` is read as `--server-key` is (the same key-file reader, whose messages name the file).
        let cases: [(option: String, arguments: [String])] = [
            ("--payload", ["open", "--keyring", "ring", "--server-public", keys.serverPublic, "--topic", "t.example",
                           "--payload", "d1"]),
            ("--payload", ["inspect", "--payload", "d1"]),
            ("--body-file", ["seal", "--server-key", "server.key", "--device-public", keys.ringPublic, "--topic", "t",
                             "--body-file", "d1"]),
            ("--title-file", ["seal", "--server-key", "server.key", "--device-public", keys.ringPublic, "--topic", "t",
                              "--title-file", "d1", "--body", "x"]),
            ("--content", ["seal", "--server-key", "server.key", "--device-public", keys.ringPublic, "--topic", "t",
                           "--content", "d1"]),
            ("--receipt", ["receipt", "--server-key", "server.key", "--device-public", keys.ringPublic, "--topic", "t",
                           "--receipt", "d1"]),
            ("--device-key", ["open", "--device-key", "d1", "--server-public", keys.serverPublic, "--topic", "t.example",
                              "--payload", "device-payload.json"]),
            ("--auth-key", send + ["--auth-key", "d1", "--payload", "payload.json"]),
            ("--payload", send + ["--auth-key", "a.p8", "--payload", "d1"]),
        ]
        for (option, arguments) in cases {
            let result = try run(cli, arguments)
            let label = "\(arguments[0]) \(option): \(result.stderr)"
            #expect(!result.timedOut, "\(label)")
            #expect(result.status == 1, "\(label)")
            #expect(result.stderr.hasPrefix("error: io: "), "\(label)")
            let expected =
                option == "--device-key" ? "d1 is not a regular file" : "\(option) d1 is a directory, not a regular file"
            #expect(result.stderr.contains(expected), "\(label)")
            #expect(!result.stderr.contains("NSCocoaErrorDomain") && !result.stderr.contains("Usage:"), "\(label)")
        }

        // A FIFO fails at once (it blocked in open); a missing file and an oversized one are named.
        #expect(mkfifo(cli.path("fifo"), 0o600) == 0)
        let fifo = try run(cli, ["inspect", "--payload", "fifo"])
        #expect(!fifo.timedOut, "inspect --payload FIFO hung")
        #expect(fifo.status == 1, "\(fifo.stderr)")
        #expect(fifo.stderr.hasPrefix("error: io: --payload fifo is a FIFO, not a regular file"), "\(fifo.stderr)")
        let missing = try cli.run(["inspect", "--payload", "missing.json"])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("error: io: --payload missing.json does not exist"), "\(missing.stderr)")
        try Data(count: 70_000).write(to: URL(fileURLWithPath: cli.path("big.json")))
        let big = try cli.run(["inspect", "--payload", "big.json"])
        #expect(big.status == 1)
        #expect(big.stderr.hasPrefix("error: invalidArgument: --payload big.json is larger than 65536 bytes"),
                "\(big.stderr)")
        // Without permission to read (not testable as root, who reads anything).
        if geteuid() != 0 {
            try Data("{}".utf8).write(to: URL(fileURLWithPath: cli.path("closed.json")))
            #expect(chmod(cli.path("closed.json"), 0) == 0)
            let closed = try cli.run(["inspect", "--payload", "closed.json"])
            #expect(closed.stderr.hasPrefix("error: io: --payload closed.json is not readable"), "\(closed.stderr)")
        }
        // Standard input still works where `-` is allowed.
        let stdin = try cli.run(["inspect", "--payload", "-"],
                                stdin: try String(contentsOfFile: cli.path("payload.json"), encoding: .utf8))
        #expect(stdin.status == 0, "\(stdin.stderr)")
    }

    /// L4: `apns-keygen` and `send` reported I/O and key errors as usage errors (exit 64 and the usage text). They
    /// report `error: <code>: <message>` and exit 1, as `keygen` does.
    @Test func apnsKeygenAndSendReportErrorsWithTheirCode() throws {
        let cli = try CLITests()
        #expect(try cli.run(["apns-keygen", "--out", "a.p8"]).status == 0)
        let key = try Data(contentsOf: URL(fileURLWithPath: cli.path("a.p8")))
        let exists = try cli.run(["apns-keygen", "--out", "a.p8"])
        #expect(exists.status == 1)
        #expect(exists.stderr.hasPrefix("error: io: "), "\(exists.stderr)")
        #expect(exists.stderr.contains("a.p8") && exists.stderr.contains("--force"), "\(exists.stderr)")
        #expect(!exists.stderr.contains("Usage:"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.path("a.p8"))) == key)
        let noDirectory = try cli.run(["apns-keygen", "--out", "missing-dir/a.p8"])
        #expect(noDirectory.status == 1)
        #expect(noDirectory.stderr.hasPrefix("error: io: ") && noDirectory.stderr.contains("missing-dir"),
                "\(noDirectory.stderr)")
        #expect(!noDirectory.stderr.contains("Usage:"))
        let forced = try cli.run(["apns-keygen", "--out", "a.p8", "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.path("a.p8"))) != key)

        try Data("{}".utf8).write(to: URL(fileURLWithPath: cli.path("p.json")))
        let secret = "NOT-A-PEM-BUT-SECRET-TEXT-4711"
        try Data(secret.utf8).write(to: URL(fileURLWithPath: cli.path("bad.p8")))
        let send = ["send", "--key-id", "ABC1234567", "--team-id", "TEAM123456", "--topic", "t.example",
                    "--payload", "p.json"]
        let cases: [(name: String, arguments: [String], prefix: String, names: String)] = [
            ("missing key", ["--endpoint", "https://127.0.0.1:1", "--auth-key", "missing.p8", "--token", Self.token],
             "error: io: ", "missing.p8"),
            ("not a key", ["--endpoint", "https://127.0.0.1:1", "--auth-key", "bad.p8", "--token", Self.token],
             "error: invalidKey: ", "bad.p8"),
            ("bad endpoint", ["--endpoint", "ftp://127.0.0.1:1", "--auth-key", "a.p8", "--token", Self.token],
             "error: invalidArgument: ", "ftp://127.0.0.1:1"),
            ("bad token", ["--endpoint", "https://127.0.0.1:1", "--auth-key", "a.p8", "--token", "zz"],
             "error: invalidArgument: ", "token"),
        ]
        for (name, arguments, prefix, names) in cases {
            let result = try cli.run(send + arguments)
            #expect(result.status == 1, "\(name): \(result.stderr)")
            #expect(result.stderr.hasPrefix(prefix), "\(name): \(result.stderr)")
            #expect(result.stderr.contains(names), "\(name): \(result.stderr)")
            #expect(!result.stderr.contains("Usage:"), "\(name): \(result.stderr)")
            #expect(!result.stderr.contains(secret), "\(name) echoed the key file")
        }
    }

    /// L9: `open --receipt-out` wrote through a symbolic link (replacing the link's target) and not atomically. The
    /// receipt replaces the link itself, through a temporary file in the same directory, and nothing else is left.
    @Test func receiptOutReplacesALinkNotItsTarget() throws {
        let cli = try CLITests()
        let keys = try fixture(cli)
        try Data("original\n".utf8).write(to: URL(fileURLWithPath: cli.path("victim.txt")))
        try FileManager.default.createSymbolicLink(atPath: cli.path("receipt.txt"), withDestinationPath: "victim.txt")
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: cli.directory.path))
        let opened = try cli.run([
            "open", "--keyring", "ring", "--server-public", keys.serverPublic, "--topic", "t.example",
            "--payload", "payload.json", "--receipt-out", "receipt.txt",
        ])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(try String(contentsOfFile: cli.path("victim.txt"), encoding: .utf8) == "original\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: cli.path("receipt.txt"))
        let type = attributes[.type] as? FileAttributeType
        #expect(type == .typeRegular)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: cli.directory.path)) == before,
                "a temporary file was left behind")
        let read = try cli.run(["receipt", "--server-key", "server.key", "--device-public", keys.ringPublic,
                                "--topic", "t.example", "--receipt", "receipt.txt"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains(#""outcome":"decrypted""#), "\(read.stdout)")
    }

    /// L10: `open --device-key FIFO` hung in a blocking open, and a bad key among several `--device-key` files was not
    /// named. Device keys are read as `--server-key` is (non-blocking, regular files only) and errors name the file.
    @Test func deviceKeyFilesFailFastAndAreNamed() throws {
        let cli = try CLITests()
        let keys = try fixture(cli)
        #expect(mkfifo(cli.path("pf"), 0o600) == 0)
        let base = [
            "open", "--server-public", keys.serverPublic, "--topic", "t.example", "--payload", "device-payload.json",
        ]
        let fifo = try run(cli, base + ["--device-key", "device.key", "--device-key", "pf"])
        #expect(!fifo.timedOut, "open --device-key FIFO hung")
        #expect(fifo.status == 1)
        #expect(fifo.stderr.hasPrefix("error: io: ") && fifo.stderr.contains("pf is not a regular file"),
                "\(fifo.stderr)")
        let secret = "SPSK1:thisIsNotAKeyButStillSecretMaterial"
        try Data(secret.utf8).write(to: URL(fileURLWithPath: cli.path("bad.key")))
        let bad = try cli.run(base + ["--device-key", "device.key", "--device-key", "bad.key"])
        #expect(bad.status == 1)
        #expect(bad.stderr.hasPrefix("error: invalidKey: bad.key is not a SealedPush private key file"), "\(bad.stderr)")
        #expect(!bad.stderr.contains("thisIsNotAKey"), "the key file's contents were echoed")
        let missing = try cli.run(base + ["--device-key", "gone.key"])
        #expect(missing.status == 1 && missing.stderr.contains("gone.key"), "\(missing.stderr)")
        // The good key alone still opens.
        let opened = try cli.run(base + ["--device-key", "device.key"])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == #"{"body":"hi"}"# + "\n")
    }
}
