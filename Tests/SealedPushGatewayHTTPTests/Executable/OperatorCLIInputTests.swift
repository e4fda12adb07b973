import Foundation
import SealedPushServer
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The operator CLI's input rules on the real binary, from an outside audit (each case failed before its fix):
/// `init` checks what `app add` checks and leaves nothing behind when it refuses or fails; commands other than
/// `init` never create a database; an identity whose file is gone can still be retired; an `--identity` file others
/// may read is refused.
@Suite("Operator CLI input", .serialized)
struct OperatorCLIInputTests {
    static func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try GatewayExecutableTests.run(arguments)
    }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-op-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func entries(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// The API's `Identifier` (`Specs/gateway-api.yaml`): 1-128 of A-Z a-z 0-9 . _ ~ -; the topic 1-255 bytes.
    /// `--app-id ../escaped` wrote the identity outside `--dir`.
    @Test func initRefusesAnAppIDOrTopicAppAddRefuses() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("gw").path
        for (appID, topic) in [("../escaped", "com.example.chat"), ("", "com.example.chat"), ("chat", "")] {
            let result = try Self.run(["init", "--dir", dir, "--app-id", appID, "--topic", topic])
            #expect(result.status != 0, "app id '\(appID)', topic '\(topic)'")
            #expect(Self.entries(root).allSatisfy { $0 == "gw" }, "\(Self.entries(root))")
            #expect(Self.entries(root.appendingPathComponent("gw")).isEmpty)
        }
    }

    /// `--apns-key` is checked as `app add` checks it (README: "a P-256 key, mode 0600"), before anything is written.
    @Test func initChecksTheAPNsKeyBeforeWriting() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let good = root.appendingPathComponent("AuthKey.p8").path
        try APNsKeyGenerator.writeNewKey(to: good)
        let notEC = root.appendingPathComponent("rsa.p8").path
        try Data("-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----\n".utf8)
            .write(to: URL(fileURLWithPath: notEC))
        chmod(notEC, 0o600)
        let open = root.appendingPathComponent("open.p8").path
        try FileManager.default.copyItem(atPath: good, toPath: open)
        chmod(open, 0o644)
        let cases: [(key: String, keyID: String, teamID: String)] = [
            (notEC, "KEY1234567", "TEAM123456"), (open, "KEY1234567", "TEAM123456"), (good, "X", "TEAM123456"),
            (good, "KEY1234567", "team"),
        ]
        for (index, item) in cases.enumerated() {
            let dir = root.appendingPathComponent("gw\(index)")
            let result = try Self.run([
                "init", "--dir", dir.path, "--topic", "com.example.chat", "--apns-key", item.key, "--key-id", item.keyID,
                "--team-id", item.teamID,
            ])
            #expect(result.status != 0, "case \(index)")
            #expect(result.stderr.contains("--apns-key") || result.stderr.contains("--key-id")
                || result.stderr.contains("--team-id"), "case \(index): \(result.stderr)")
            #expect(Self.entries(dir).isEmpty, "case \(index): \(Self.entries(dir))")
        }
        // Ids given without a key are checked for their form too.
        let dir = root.appendingPathComponent("ids")
        #expect(try Self.run(["init", "--dir", dir.path, "--topic", "t", "--key-id", "short"]).status != 0)
        #expect(Self.entries(dir).isEmpty)
        // The good key goes through.
        let ok = try Self.run([
            "init", "--dir", root.appendingPathComponent("ok").path, "--topic", "com.example.chat", "--apns-key", good,
            "--key-id", "KEY1234567", "--team-id", "TEAM123456",
        ])
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    /// A failed `init` removed nothing it had written (the identity, the database), and a second try was refused
    /// because the identity existed; a dangling `gateway.json` link was found only after the database was written.
    @Test func aFailedInitLeavesNothingAndCanBeRunAgain() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("gw")
        let failed = try Self.run([
            "init", "--dir", dir.path, "--topic", "t", "--database", "sqlite:/nonexistent-\(UUID().uuidString)/x.sqlite",
        ])
        #expect(failed.status != 0)
        #expect(Self.entries(dir).isEmpty, "\(Self.entries(dir))")
        let again = try Self.run(["init", "--dir", dir.path, "--topic", "t"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.entries(dir).contains("gateway.json"))

        let linked = root.appendingPathComponent("linked")
        try FileManager.default.createDirectory(at: linked, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: linked.appendingPathComponent("gateway.json").path, withDestinationPath: root.appendingPathComponent("nowhere.json").path)
        let refused = try Self.run(["init", "--dir", linked.path, "--topic", "t"])
        #expect(refused.status != 0)
        #expect(Self.entries(linked) == ["gateway.json"], "\(Self.entries(linked))")
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("nowhere.json").path))
    }

    /// README: `status` "reads the shared database". A mistyped SQLite path made `app list`, `key list` and
    /// `status` create an empty database and exit 0.
    @Test func commandsOtherThanInitNeverCreateADatabase() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        _ = try GatewayExecutableTests.initialize(root.appendingPathComponent("gw"))
        let config = root.appendingPathComponent("gw/gateway.json").path
        var object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        object["database"] = "sqlite:typo.sqlite"
        let typo = root.appendingPathComponent("gw/typo.json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: typo))
        for command in [["app", "list"], ["key", "list"], ["status"], ["identity", "list"]] {
            let result = try Self.run(command + ["--config", typo])
            #expect(result.status != 0, "\(command)")
            #expect(result.stderr.contains("no SQLite database"), "\(command): \(result.stderr)")
        }
        #expect(!Self.entries(root.appendingPathComponent("gw")).contains { $0.hasPrefix("typo.sqlite") })
    }

    /// An identity rotated out whose file was moved or lost: `retire --key-id` cannot read its key id, and `check`
    /// failed for good. `retire --path` (the path `identity list` shows) retires it.
    @Test func anUnreadableIdentityIsRetiredByPath() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("gw")
        _ = try GatewayExecutableTests.initialize(dir)
        let config = dir.appendingPathComponent("gateway.json").path
        #expect(try Self.run(["identity", "rotate", "--config", config, "--app-id", "shop"]).status == 0)
        let old = dir.appendingPathComponent("shop.identity").path
        try FileManager.default.moveItem(atPath: old, toPath: old + ".moved")
        let byKeyID = try Self.run([
            "identity", "retire", "--config", config, "--app-id", "shop", "--key-id", "0000000000000000", "--apps-pin-new",
        ])
        #expect(byKeyID.status != 0)
        let byPath = try Self.run([
            "identity", "retire", "--config", config, "--app-id", "shop", "--path", old, "--apps-pin-new",
        ])
        #expect(byPath.status == 0, "\(byPath.stderr)")
        let list = try Self.run(["identity", "list", "--config", config, "--app-id", "shop"])
        #expect(list.status == 0)
        #expect(!list.stdout.contains(old), "\(list.stdout)")
        // The sealing identity is never retired by path.
        let sealing = try Self.run(["identity", "list", "--config", config, "--app-id", "shop", "--json"])
        let current = try #require(sealing.stdout.split(separator: "\"").first { $0.hasSuffix(".identity") })
        #expect(try Self.run([
            "identity", "retire", "--config", config, "--app-id", "shop", "--path", String(current), "--apps-pin-new",
        ]).status != 0)
    }

    /// Help and README: an `--identity` file is 0600. One others may read was accepted by `identity rotate` and
    /// `app add`.
    @Test func anIdentityFileOthersMayReadIsRefused() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("gw")
        _ = try GatewayExecutableTests.initialize(dir)
        let config = dir.appendingPathComponent("gateway.json").path
        let prepared = root.appendingPathComponent("prepared.identity").path
        try ServerIdentity.generate().write(toFile: prepared)
        chmod(prepared, 0o644)
        let rotate = try Self.run(["identity", "rotate", "--config", config, "--app-id", "shop", "--identity", prepared])
        #expect(rotate.status != 0)
        #expect(rotate.stderr.contains("readable by others"), "\(rotate.stderr)")
        let add = try Self.run([
            "app", "add", "--config", config, "--app-id", "news", "--topic", "com.example.news", "--identity", prepared,
        ])
        #expect(add.status != 0)
        #expect(add.stderr.contains("readable by others"), "\(add.stderr)")
    }

    /// `key list` prints a key's name as given: a name with a bidirectional override or a C1 control character could
    /// make a listing read as something else (an outside audit found both accepted).
    @Test func aKeyNameWithFormattingCharactersIsRefused() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("gw")
        _ = try GatewayExecutableTests.initialize(dir)
        let config = dir.appendingPathComponent("gateway.json").path
        for name in ["ci\u{202E}ue-dnekcab", "ci\u{85}x", "a\u{2066}b"] {
            let result = try Self.run(["key", "create", "--config", config, "--app-id", "shop", "--name", name])
            #expect(result.status != 0, "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        #expect(try Self.run(["key", "create", "--config", config, "--app-id", "shop", "--name", "backend-eu é"]).status == 0)
    }

    /// `check` judged a symbolic link to a 0600 identity by the link's own mode ("mode 777: others can read it").
    @Test func checkJudgesALinkedKeyFileByItsTarget() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("gw")
        _ = try GatewayExecutableTests.initialize(dir)
        let config = dir.appendingPathComponent("gateway.json").path
        let target = root.appendingPathComponent("news.identity").path
        try ServerIdentity.generate().write(toFile: target)
        let link = root.appendingPathComponent("news-link.identity").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let add = try Self.run([
            "app", "add", "--config", config, "--app-id", "news", "--topic", "com.example.news", "--identity", target,
        ])
        #expect(add.status == 0, "\(add.stderr)")
        // Point the app at the link, as an operator's deployment tool might, then check.
        let store = dir.appendingPathComponent("gateway.sqlite").path
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = ["python3", "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"update apps set server_identity_path=? where id='news'\", (sys.argv[2],)); c.commit()", store, link]
        try sqlite.run()
        sqlite.waitUntilExit()
        #expect(sqlite.terminationStatus == 0)
        let check = try Self.run(["check", "--config", config])
        #expect(!check.stdout.contains("mode 777"), "\(check.stdout)")
    }
}
