import Foundation
import SealedPushCore
import Testing

/// Runs the real `sealed-push` binary with real command lines.
@Suite final class CLITests: Sendable {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `sealed-push` executable in the same build products directory as the running test binary.
    static var binary: URL {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("sealed-push")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return runner.deletingLastPathComponent().appendingPathComponent("sealed-push")
    }

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sealed-push-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    @discardableResult
    func run(_ arguments: [String], stdin: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self))
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A mistyped command word is named, with the nearest command and where it was (ArgumentParser alone reported
    /// the first option it could not place: "Unknown option '--keyring'"); nothing is written.
    @Test func mistypedCommandsAreNamed() throws {
        let nested = try run(["device", "inti", "--keyring", "ring"])
        #expect(nested.status == 64)
        #expect(nested.stderr.contains("unknown command 'inti' for 'sealed-push device'; did you mean 'init'?"), "\(nested.stderr)")
        #expect(nested.stderr.contains("See 'sealed-push device --help'"))
        let top = try run(["sned", "--topic", "com.example.app"])
        #expect(top.status == 64)
        #expect(top.stderr.contains("unknown command 'sned' for 'sealed-push'; did you mean 'send'?"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        // Help, options and a leaf command's own words stay ArgumentParser's.
        #expect(try run(["help", "device"]).status == 0)
        #expect(try run(["device", "--help"]).status == 0)
        #expect(try run(["keygen", "--out", "server.key"]).status == 0)
    }

    /// `--version` prints the release's version (``SealedPushVersion``) and nothing else.
    @Test func versionPrintsTheRelease() throws {
        let result = try run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == SealedPushVersion.current + "\n")
    }

    @Test func keygenWritesA0600FileAndPrintsOnlyThePublicKey() throws {
        let result = try run(["keygen", "--out", "server.key"])
        #expect(result.status == 0)
        let publicKey = result.stdout.trimmingCharacters(in: .newlines)
        #expect(try KeyText.decodePublicKey(publicKey).count == 32)
        let attributes = try FileManager.default.attributesOfItem(atPath: path("server.key"))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let file = try String(contentsOfFile: path("server.key"), encoding: .utf8)
        #expect(file.hasPrefix("SPSK1:"))
        #expect(!result.stdout.contains(String(file.dropFirst(6).prefix(20))))
        // Never overwrites an existing key, and leaves no temporary file behind.
        #expect(try run(["keygen", "--out", "server.key"]).status != 0)
        #expect(try String(contentsOfFile: path("server.key"), encoding: .utf8) == file)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["server.key"])
    }

    @Test func sealOpenInspectAndReplay() throws {
        let serverPublic = try run(["keygen", "--out", "server.key"]).stdout.trimmingCharacters(in: .newlines)
        let registration = try run(["device", "init", "--keyring", "ring", "--now", "2026-11-21T10:00:00Z"])
        #expect(registration.status == 0)
        let record = try JSONDecoder().decode(DeviceRegistration.self, from: Data(registration.stdout.utf8))
        let content = #"{"badge":3,"thread-id":"t","data":{"k":[1,2]}}"#
        try content.write(toFile: path("content.json"), atomically: true, encoding: .utf8)
        let sealed = try run([
            "seal", "--server-key", "server.key", "--device-public", record.publicKey, "--topic", "com.example.cli",
            "--title", "Secret title", "--body", "Secret body ✉️", "--content", "content.json", "--ttl", "600",
        ])
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(!sealed.stdout.contains("Secret"))
        #expect(sealed.stdout.contains(#""mutable-content":1"#))
        try sealed.stdout.write(toFile: path("payload.json"), atomically: true, encoding: .utf8)

        let inspected = try run(["inspect", "--payload", "payload.json"])
        #expect(inspected.status == 0)
        #expect(inspected.stdout.contains(record.keyId))
        #expect(inspected.stdout.contains("lifetime           600 s"))
        #expect(!inspected.stdout.contains("Secret"))

        let openArguments = ["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "com.example.cli",
                             "--payload", "payload.json"]
        let opened = try run(openArguments)
        #expect(opened.status == 0, "\(opened.stderr)")
        let openedContent = try NotificationContent(json: Array(opened.stdout.trimmingCharacters(in: .newlines).utf8))
        #expect(openedContent == NotificationContent(
            title: "Secret title", body: "Secret body ✉️", badge: 3, threadID: "t",
            data: .object(["k": .array([.number(1), .number(2)])])))

        // A second process opening the same payload moments later (a sender's resend): an exact duplicate, so the
        // same content again (keyring spec §5.5), `duplicate` on stderr; suppressed, nothing on stdout.
        let again = try run(openArguments)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == opened.stdout)
        #expect(again.stderr.hasPrefix("duplicate: "), "\(again.stderr)")
        let suppressed = try run(openArguments + ["--suppress-duplicates"])
        #expect(suppressed.status == 0 && suppressed.stdout.isEmpty)
        #expect(suppressed.stderr.contains("suppressed"))
        // Without a duplicate window (as after it): replayed, no plaintext anywhere.
        let replay = try run(openArguments + ["--duplicate-window", "0"])
        #expect(replay.status != 0)
        #expect(replay.stderr.contains("replayed"))
        #expect(replay.stdout.isEmpty)
        #expect(!replay.stderr.contains("Secret"))

        // Stdin works for open too, and the wrong topic fails with the single authentication error.
        let wrongTopic = try run(
            ["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "com.example.other"],
            stdin: sealed.stdout)
        #expect(wrongTopic.status != 0)
        #expect(wrongTopic.stderr.contains("authenticationFailure"))
        #expect(!wrongTopic.stdout.contains("Secret") && !wrongTopic.stderr.contains("Secret"))
    }

    @Test func openWithDeviceKeyFilesAndExpiry() throws {
        let serverPublic = try run(["keygen", "--out", "server.key"]).stdout.trimmingCharacters(in: .newlines)
        let devicePublic = try run(["keygen", "--out", "device.key"]).stdout.trimmingCharacters(in: .newlines)
        let oldDevicePublic = try run(["keygen", "--out", "old.key"]).stdout.trimmingCharacters(in: .newlines)
        _ = oldDevicePublic
        let sealed = try run([
            "seal", "--server-key", "server.key", "--device-public", devicePublic, "--topic", "t.example",
            "--body", "hello", "--ttl", "60",
        ])
        try sealed.stdout.write(toFile: path("p.json"), atomically: true, encoding: .utf8)
        let base = ["open", "--device-key", "old.key", "--device-key", "device.key", "--server-public", serverPublic,
                    "--topic", "t.example", "--payload", "p.json"]
        let opened = try run(base)
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == #"{"body":"hello"}"# + "\n")
        let issued = try #require(try run(["inspect", "--payload", "p.json"]).stdout
            .split(separator: "\n").first { $0.hasPrefix("expires at") })
        let expiresAt = try #require(issued.split(separator: "(").last.flatMap { UInt64($0.dropLast()) })
        let expired = try run(base + ["--now", String(expiresAt)])
        #expect(expired.status != 0)
        #expect(expired.stderr.contains("expired"))
        #expect(try run(base + ["--now", String(expiresAt - 1)]).status == 0)
        let unknown = try run(["open", "--device-key", "old.key", "--server-public", serverPublic, "--topic", "t.example",
                               "--payload", "p.json"])
        #expect(unknown.stderr.contains("unknownRecipientKey"))
    }

    @Test func badInputGetsTypedErrors() throws {
        let badKey = try run(["seal", "--server-key", "missing.key", "--device-public", "SPK1:nope", "--topic", "t",
                              "--body", "x"])
        #expect(badKey.status != 0)
        #expect(badKey.stderr.contains("error: io:"))
        _ = try run(["keygen", "--out", "s.key"])
        let badPublic = try run(["seal", "--server-key", "s.key", "--device-public", "SPK1:nope", "--topic", "t",
                                 "--body", "x"])
        #expect(badPublic.stderr.contains("invalidKey"))
        let big = try run(["seal", "--server-key", "s.key", "--device-public", "SPK1:" + String(repeating: "A", count: 43),
                           "--topic", "t", "--body", String(repeating: "x", count: 3000)])
        #expect(big.stderr.contains("contentTooLarge") || big.stderr.contains("invalidKey"))
        let garbage = try run(["inspect"], stdin: "{\"sp\":\"@@\"}")
        #expect(garbage.status != 0)
        #expect(garbage.stderr.contains("badEncoding"))
    }

    @Test func deviceRotateAndPrune() throws {
        #expect(try run(["device", "init", "--keyring", "r", "--now", "1800000000"]).status == 0)
        #expect(try run(["device", "init", "--keyring", "r", "--now", "1800000000"]).status != 0)
        let rotated = try run(["device", "rotate", "--keyring", "r", "--now", "1800000100"])
        #expect(rotated.status == 0)
        #expect(try run(["device", "prune", "--keyring", "r", "--now", "1800000200"]).stdout == "nothing to prune\n")
        // Past the documented grace window (≥ 28 days) the retired key goes.
        let pruned = try run(["device", "prune", "--keyring", "r", "--now", "1810000000"])
        #expect(pruned.stdout.hasPrefix("pruned "))
        let ring = try FileManager.default.attributesOfItem(atPath: path("r"))
        #expect((ring[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }

    /// Issue 10's CLI friction: text starting with `-` or a combining mark, `loc-args`, `--payload -`, and the
    /// replay state an operator needs after an incident.
    @Test func textFromFilesLocArgsStdinAndReplayState() throws {
        let serverPublic = try run(["keygen", "--out", "server.key"]).stdout.trimmingCharacters(in: .newlines)
        let registration = try run(["device", "init", "--keyring", "ring"])
        let devicePublic = try #require(
            try JSONSerialization.jsonObject(with: Data(registration.stdout.utf8)) as? [String: Any])["publicKey"] as? String
        let bodyText = "-5 °C \u{301}and falling\n--body looks like an option"
        try Data((bodyText + "\n").utf8).write(to: URL(fileURLWithPath: path("body.txt")))
        let sealed = try run([
            "seal", "--server-key", "server.key", "--device-public", try #require(devicePublic), "--topic", "t.example",
            "--title-file", "-", "--body-file", "body.txt", "--placeholder-loc-key", "NEW_FROM",
            "--placeholder-loc-arg", "Alice", "--placeholder-loc-arg", "-1",
        ], stdin: "\u{301}Title from stdin\n")
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(sealed.stdout.hasPrefix(#"{"aps":{"alert":{"loc-key":"NEW_FROM","loc-args":["Alice","-1"]},"#))
        // `--payload -` reads standard input.
        let opened = try run(["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "t.example",
                              "--payload", "-"], stdin: sealed.stdout)
        #expect(opened.status == 0, "\(opened.stderr)")
        let content = try NotificationContent(json: Array(opened.stdout.trimmingCharacters(in: .newlines).utf8))
        #expect(content.body == bodyText)
        #expect(content.title == "\u{301}Title from stdin")
        // The replay state, inspected and reset.
        let state = try run(["device", "replay-state", "--keyring", "ring"])
        #expect(state.status == 0)
        #expect(state.stdout.contains("ids remembered:      1 of 16384"))
        #expect(try run(["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "t.example",
                         "--duplicate-window", "0"], stdin: sealed.stdout).stderr.hasPrefix("error: replayed:"))
        #expect(try run(["device", "replay-state", "--keyring", "ring", "--reset"]).status == 0)
        #expect(try run(["device", "replay-state", "--keyring", "ring"]).stdout.contains("ids remembered:      0 of"))
        // Conflicting options are refused before anything runs.
        let both = try run(["seal", "--server-key", "server.key", "--device-public", try #require(devicePublic),
                            "--topic", "t", "--body", "x", "--body-file", "body.txt"])
        #expect(both.status != 0)
        #expect(both.stderr.contains("--body or --body-file"))
        // `--body VALUE` takes VALUE as is, even when it starts with `-` or a combining mark.
        for text in ["-5 °C", "--verbose", "\u{301}accent first"] {
            let direct = try run(["seal", "--server-key", "server.key", "--device-public", try #require(devicePublic),
                                  "--topic", "t.example", "--body", text])
            #expect(direct.status == 0, "\(text): \(direct.stderr)")
            let reopened = try run(["device", "replay-state", "--keyring", "ring", "--reset"])
            #expect(reopened.status == 0)
            let back = try run(["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "t.example"],
                               stdin: direct.stdout)
            #expect(try NotificationContent(json: Array(back.stdout.trimmingCharacters(in: .newlines).utf8)).body == text)
        }
    }

    /// Issue 10 items 7 and 8 through the shipped CLI: a FIFO key ring fails at once, a symlinked directory is refused.
    @Test func fifoAndSymlinkedKeyRingsFailFast() throws {
        let serverPublic = try run(["keygen", "--out", "server.key"]).stdout.trimmingCharacters(in: .newlines)
        try FileManager.default.createDirectory(atPath: path("fifo"), withIntermediateDirectories: false)
        #expect(mkfifo(path("fifo/keyring.json"), 0o600) == 0)
        let started = Date()
        let opened = try run(["open", "--keyring", "fifo", "--server-public", serverPublic, "--topic", "t.example"],
                             stdin: #"{"sp":"AQ"}"#)
        #expect(opened.stderr.hasPrefix("error: "))
        #expect(Date().timeIntervalSince(started) < 30)
        try FileManager.default.createDirectory(atPath: path("target"), withIntermediateDirectories: false)
        #expect(chmod(path("target"), 0o755) == 0)
        try FileManager.default.createSymbolicLink(atPath: path("kdir"), withDestinationPath: path("target"))
        let refused = try run(["device", "init", "--keyring", "kdir"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("keyStoreCorrupt") && refused.stderr.contains("symbolic link"))
        #expect((try FileManager.default.attributesOfItem(atPath: path("target"))[.posixPermissions] as? Int) == 0o755)
    }

    @Test func demoRunsTheWholePath() throws {
        let result = try run(["demo", "--workdir", path("demo")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("APNs accepted it"))
        #expect(result.stdout.contains("outcome: decrypted"))
        #expect(result.stdout.contains("Table for two at 19:30"))
        #expect(result.stdout.contains("fallback: replayed"))
        // What APNs saw carries none of the content.
        let seen = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("5. APNs saw") })
        #expect(!seen.contains("Table") && !seen.contains("Dinner"))
        // The encrypted image went through the blob server and the step into a file identical to the original.
        #expect(result.stdout.contains("identical to the original"))
        // (Hidden: the .verified folder of files kept for exact duplicates.)
        let attachments = try FileManager.default.contentsOfDirectory(atPath: path("demo/attachments")).filter { !$0.hasPrefix(".") }
        #expect(attachments.count == 1 && attachments.first?.hasSuffix(".png") == true)
        let blobs = try FileManager.default.contentsOfDirectory(atPath: path("demo/blobs")).filter { !$0.hasPrefix(".") }
        let stored = try Data(contentsOf: URL(fileURLWithPath: path("demo/blobs/" + (blobs.first ?? ""))))
        #expect(!stored.starts(with: [0x89, 0x50, 0x4E, 0x47]), "the blob store holds ciphertext, not the PNG")
    }

    /// Issue 11 point 6 through the shipped CLI: seal --attach into a blob directory, serve it, open with
    /// --attachments-dir; the file comes back identical.
    @Test func sealAttachServeAndOpenWithAttachments() throws {
        let serverPublic = try run(["keygen", "--out", "server.key"]).stdout.trimmingCharacters(in: .newlines)
        let registration = try run(["device", "init", "--keyring", "ring"])
        let devicePublic = try #require(
            try JSONSerialization.jsonObject(with: Data(registration.stdout.utf8)) as? [String: Any])["publicKey"] as? String
        let audio = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try audio.write(to: URL(fileURLWithPath: path("clip.m4a")))
        // Serve the blob directory on an ephemeral port; its first stdout line names the URL.
        try FileManager.default.createDirectory(atPath: path("blobs"), withIntermediateDirectories: true)
        let server = Process()
        server.executableURL = Self.binary
        server.arguments = ["blobs", "serve", "--dir", path("blobs"), "--port", "0"]
        let out = Pipe()
        server.standardOutput = out
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        var line = Data()
        while !line.contains(0x0A) {
            let piece = out.fileHandleForReading.availableData
            if piece.isEmpty { break }
            line.append(piece)
        }
        let text = String(decoding: line, as: UTF8.self)
        let url = try #require(text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first { $0.hasPrefix("http://") })
        let prefix = url.hasSuffix("/") ? String(url) : String(url) + "/"
        let sealed = try run([
            "seal", "--server-key", "server.key", "--device-public", try #require(devicePublic), "--topic", "t.example",
            "--body", "listen", "--attach", "clip.m4a", "--blob-dir", path("blobs"), "--blob-url", prefix,
        ])
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(sealed.stderr.contains("encrypting clip.m4a"))
        let opened = try run(["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "t.example",
                              "--attachments-dir", "received"], stdin: sealed.stdout)
        #expect(opened.status == 0, "\(opened.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: path("received")).filter { !$0.hasPrefix(".") }
        #expect(files.count == 1 && files.first?.hasSuffix(".m4a") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("received/" + (files.first ?? "")))) == audio)
        // Through the step, a failure still reports its exact code (not just the step's fallback reason).
        // The same payload again moments later: a duplicate, delivered again through the step.
        let duplicate = try run(["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "t.example",
                                 "--attachments-dir", "received"], stdin: sealed.stdout)
        #expect(duplicate.status == 0, "\(duplicate.stderr)")
        #expect(duplicate.stderr.contains("duplicate: ") && duplicate.stdout == opened.stdout)
        let again = try run(["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "t.example",
                             "--attachments-dir", "received", "--duplicate-window", "0"], stdin: sealed.stdout)
        #expect(again.stderr.hasPrefix("error: replayed:"), "\(again.stderr)")
        let garbage = try run(["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "t.example",
                               "--attachments-dir", "received"], stdin: "not json")
        #expect(garbage.stderr.hasPrefix("error: malformedPayload:"), "\(garbage.stderr)")
    }

    /// Regression (outside review): `seal --blob-url ftp://…` stored the blob before refusing the URL, an orphan; a
    /// ninth attachment, a too-large file or a bad media type must likewise leave nothing in the blob directory.
    @Test func refusedAttachmentsLeaveNoBlobBehind() throws {
        _ = try run(["keygen", "--out", "server.key"])
        let registration = try run(["device", "init", "--keyring", "ring"])
        let devicePublic = try #require(
            try JSONSerialization.jsonObject(with: Data(registration.stdout.utf8)) as? [String: Any])["publicKey"] as? String
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path("a.jpg")))
        try Data(count: 5_000_001).write(to: URL(fileURLWithPath: path("big.mp3")))
        let base = [
            "seal", "--server-key", "server.key", "--device-public", try #require(devicePublic), "--topic", "t.example",
            "--body", "hi", "--blob-dir", path("blobs"),
        ]
        let cases: [(name: String, arguments: [String], message: String)] = [
            ("ftp URL", ["--blob-url", "ftp://blobs.example.com/", "--attach", "a.jpg"], "https:// or http://"),
            ("nine attachments", ["--blob-url", "https://b.example.com/"] + Array(repeating: ["--attach", "a.jpg"], count: 9).flatMap { $0 }, "at most 8"),
            ("audio over its cap after a good image", ["--blob-url", "https://b.example.com/", "--attach", "a.jpg", "--attach", "big.mp3"], "5000000"),
            ("unknown type after a good image", ["--blob-url", "https://b.example.com/", "--attach", "a.jpg", "--attach", "a.jpg", "--attach-type", "image/jpeg", "--attach-type", "image/webp"], "unsupported media type"),
        ]
        for (name, arguments, message) in cases {
            let result = try run(base + arguments)
            #expect(result.status != 0, "\(name) was accepted")
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: path("blobs"))) ?? []
            #expect(left.filter { !$0.hasPrefix(".") }.isEmpty, "\(name) left \(left)")
        }
        // Eight is the limit, and it is accepted.
        let eight = try run(base + ["--blob-url", "https://b.example.com/"] + Array(repeating: ["--attach", "a.jpg"], count: 8).flatMap { $0 })
        #expect(eight.status == 0, "\(eight.stderr)")
    }
}

/// `open --receipt-out` and `receipt` (control-v1 §4): the device seals a receipt, the server opens it; another device
/// key, another app and a changed byte are refused with their codes.
@Suite struct ReceiptCLITests {
    @Test func openWritesAReceiptTheServerOpens() throws {
        let cli = try CLITests()
        let serverPublic = try cli.run(["keygen", "--out", "server.key"]).stdout.trimmingCharacters(in: .newlines)
        let registration = try cli.run(["device", "init", "--keyring", "ring"])
        let devicePublic = try #require(
            try JSONSerialization.jsonObject(with: Data(registration.stdout.utf8)) as? [String: Any])["publicKey"] as? String
        let sealed = try cli.run(["seal", "--server-key", "server.key", "--device-public", try #require(devicePublic),
                                  "--topic", "com.example.r", "--body", "receipt please"])
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let opened = try cli.run(["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "com.example.r",
                                  "--receipt-out", "receipt.txt"], stdin: sealed.stdout)
        #expect(opened.status == 0, "\(opened.stderr)")
        let receiptArguments = ["receipt", "--server-key", "server.key", "--device-public", try #require(devicePublic),
                                "--topic", "com.example.r", "--receipt", "receipt.txt"]
        let read = try cli.run(receiptArguments)
        #expect(read.status == 0, "\(read.stderr)")
        let record = try #require(try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: Any])
        #expect(record["outcome"] as? String == "decrypted")
        let deviceTime = try #require(record["device-time"] as? Int)
        #expect(abs(deviceTime - Int(Date().timeIntervalSince1970)) < 60)
        #expect((record["message-id"] as? String)?.count == 32)
        #expect(!read.stdout.contains("receipt please"))
        // Another app, another device key, a changed character: refused.
        var other = receiptArguments
        other[other.firstIndex(of: "com.example.r")!] = "com.example.other"
        #expect(try cli.run(other).stderr.hasPrefix("error: authenticationFailure"))
        var wrongKey = receiptArguments
        wrongKey[wrongKey.firstIndex(of: try #require(devicePublic))!] = serverPublic
        #expect(try cli.run(wrongKey).stderr.hasPrefix("error: unknownSenderKey"))
        var text = try String(contentsOfFile: cli.path("receipt.txt"), encoding: .utf8)
        let index = text.index(text.startIndex, offsetBy: 200)
        text.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
        try text.write(toFile: cli.path("receipt.txt"), atomically: true, encoding: .utf8)
        #expect(try cli.run(receiptArguments).status != 0)
    }
}
