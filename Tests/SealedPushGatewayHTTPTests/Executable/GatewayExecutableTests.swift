import Foundation
import SealedPushCore
import SealedPushServer
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

import SealedPushProxyTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real `sealed-push-gateway` binary: `init` writes 0600 files and prints a key that authenticates; `serve`
/// answers over HTTP and exits 0 on SIGTERM after finishing.
@Suite("Gateway executable", .serialized)
struct GatewayExecutableTests {
    /// The executable in the same build products directory as the running test binary.
    static var binary: URL {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("sealed-push-gateway")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return runner.deletingLastPathComponent().appendingPathComponent("sealed-push-gateway")
    }

    /// Runs the binary to completion (with `environment` added to this process's); returns its status and output.
    static func run(
        _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    static func mode(_ path: String) throws -> Int {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw TestFailure("cannot stat \(path)") }
        return Int(status.st_mode & 0o777)
    }

    static func initialize(_ directory: URL) throws -> String {
        let result = try run([
            "init", "--dir", directory.path, "--app-id", "shop", "--topic", "com.example.shop", "--team-id", "TEAM123456",
            "--key-id", "KEY1234567",
        ])
        guard result.status == 0 else { throw TestFailure("init exited \(result.status): \(result.stderr)") }
        guard let line = result.stdout.split(separator: "\n").first(where: { $0.hasPrefix("API key") }),
            let key = line.split(separator: " ").last
        else { throw TestFailure("init printed no API key: \(result.stdout)") }
        return String(key)
    }

    /// Runs `init` (app `shop`) into a fresh directory on `backend`, then `body` with the configuration's path, the
    /// directory and the store opened beside the binary's; closes and removes everything after, also on a throw.
    static func withInitializedGateway(
        _ backend: Backend, _ body: (_ config: String, _ directory: URL, _ store: any GatewayStore) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let postgres = backend == .postgres ? try await PostgresTestDatabase.create(prefix: "sp_gw_") : nil
        var arguments = [
            "init", "--dir", directory.path, "--app-id", "shop", "--topic", "com.example.shop", "--team-id", "TEAM123456",
            "--key-id", "KEY1234567",
        ]
        if let postgres { arguments += ["--database", postgres.url] }
        let initialized = try Self.run(arguments)
        guard initialized.status == 0 else {
            try? await postgres?.drop()
            throw TestFailure("init exited \(initialized.status): \(initialized.stderr)")
        }
        let store: any GatewayStore =
            if let postgres { try PostgresGatewayStore(url: postgres.url) } else {
                try SQLiteGatewayStore(path: directory.appendingPathComponent("gateway.sqlite").path)
            }
        do {
            try await body(directory.appendingPathComponent("gateway.json").path, directory, store)
        } catch {
            try? await store.close()
            try? await postgres?.drop()
            throw error
        }
        try await store.close()
        try await postgres?.drop()
    }

    @Test func initWritesPrivateFilesAndAKeyThatAuthenticates() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-init-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try Self.initialize(directory)
        #expect(APIKey(parsing: key) != nil)

        let config = directory.appendingPathComponent("gateway.json").path
        let identity = directory.appendingPathComponent("shop.identity").path
        #expect(try Self.mode(config) == 0o600)
        #expect(try Self.mode(identity) == 0o600)
        #expect(try Self.mode(directory.appendingPathComponent("gateway.sqlite").path) == 0o600)
        let configText = try String(contentsOfFile: config, encoding: .utf8)
        #expect(configText.contains("sqlite:gateway.sqlite"))
        #expect(!configText.contains(key))
        #expect(try String(contentsOfFile: identity, encoding: .utf8).hasPrefix("SPSK1:"))

        let database = directory.appendingPathComponent("gateway.sqlite").path
        let store = try SQLiteGatewayStore(path: database)
        #expect(try await store.authenticate(bearer: key) == "shop")
        let app = try #require(try await store.app(id: "shop"))
        #expect(app.topic == "com.example.shop")
        #expect(app.serverIdentityPath == identity)
        try await store.close()
        // The key is stored as its digest only.
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: database + suffix) {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: database + suffix)))
            #expect(!bytes.contains(bytes: Array(key.utf8)))
        }
        // A second init into the same directory is refused and leaves the first intact.
        #expect(try Self.run(["init", "--dir", directory.path, "--topic", "t"]).status != 0)
        #expect(try String(contentsOfFile: config, encoding: .utf8) == configText)
    }

    /// `webhook list` and `webhook redeliver` on the real binary, on each store: a given-up event is listed with why
    /// (never a body), `redeliver` wants `--id` or `--all`, names ids that are not given up, and makes the event
    /// claimable again with its delivery id and no attempts counted.
    @Test(arguments: Backend.available)
    func webhookListAndRedeliver(_ backend: Backend) async throws {
        try await Self.withInitializedGateway(backend) { config, directory, store in
            // A device of `shop` that APNs called unregistered, whose event the webhook then gave up.
            let device = try ServerIdentity.generate()
            let now = Date()
            _ = try await store.putDevice(
                appID: "shop", deviceID: "phone-1", apnsToken: String(repeating: "ab", count: 32), environment: .sandbox,
                registration: DeviceRegistration(publicKey: device.publicKeyText, keyId: device.keyID.hex, createdAt: now),
                now: now)
            let sealer = try Sealer(
                identity: try ServerIdentity(contentsOfFile: directory.appendingPathComponent("shop.identity").path),
                topic: "com.example.shop")
            let sealed = try sealer.seal(
                NotificationContent(body: "hi"), to: try DevicePublicKey(rawRepresentation: device.publicKey), ttl: 3600,
                now: UInt64(now.timeIntervalSince1970))
            let id = UUID()
            _ = try await store.enqueue(
                NewNotification(
                    id: id, appID: "shop", idempotencyKey: nil, priority: 10, collapseID: id.lowercasedString,
                    createdAt: now, expiresAt: now.addingTimeInterval(3600),
                    jobs: [
                        NewNotification.Job(
                            deviceID: "phone-1", body: try SealedBody(apnsBody: sealed.payload),
                            messageID: Hex.encode(sealed.messageID), keyID: sealed.recipientKeyID.hex)
                    ]))
            let job = try #require(
                try await store.claim(owner: "node/1", limit: 1, leaseDuration: .seconds(60), now: now).first)
            _ = try await store.finish([
                JobFinish(
                    jobID: job.id, owner: "node/1", outcome: .unregistered(reason: "Unregistered"), requests: 1,
                    transientReason: nil, now: now,
                    webhookEvent: UnregisteredDeviceEvent(
                        appID: "shop", deviceID: "phone-1", reason: "Unregistered", unregisteredAt: now))
            ])
            let event = try #require(
                try await store.claimWebhookEvents(owner: "node/1", limit: 1, leaseDuration: .seconds(60), now: now).first)
            #expect(
                try await store.giveUpWebhookEvent(
                    id: event.id, owner: "node/1", attempts: 8, failure: "HTTP 503", now: now))

            let status = try Self.run(["status", "--config", config])
            #expect(status.stdout.contains("webhook events: 0 waiting, 1 given up (`sealed-push-gateway webhook list`"))
            let list = try Self.run(["webhook", "list", "--config", config, "--json"])
            #expect(list.status == 0, "\(list.stderr)")
            let listed = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            #expect(listed.count == 1)
            #expect(listed.first?["id"] as? Int == Int(event.id) && listed.first?["deliveryId"] as? String == event.deliveryID)
            #expect(listed.first?["type"] as? String == "device.unregistered" && listed.first?["deviceId"] as? String == "phone-1")
            #expect(listed.first?["attempts"] as? Int == 8 && listed.first?["failure"] as? String == "HTTP 503")
            let text = try Self.run(["webhook", "list", "--config", config, "--app-id", "shop"])
            #expect(text.stdout.hasPrefix("\(event.id)  device.unregistered  app shop  device phone-1  attempts 8"))
            #expect(try Self.run(["webhook", "list", "--config", config, "--app-id", "other"]).stdout.isEmpty)

            // Neither --id nor --all; both; an id that is not given up.
            #expect(try Self.run(["webhook", "redeliver", "--config", config]).status != 0)
            #expect(try Self.run(["webhook", "redeliver", "--config", config, "--all", "--id", "\(event.id)"]).status != 0)
            let unknown = try Self.run(["webhook", "redeliver", "--config", config, "--id", "\(event.id + 1000)"])
            #expect(unknown.status != 0 && unknown.stderr.contains("not given-up events"))
            let sent = try Self.run(["webhook", "redeliver", "--config", config, "--id", "\(event.id)", "--json"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(sent.stdout.utf8)) as? [String: Int])
            #expect(answer == ["redelivered": 1])
            #expect(try Self.run(["webhook", "list", "--config", config]).stdout.isEmpty)
            #expect(try Self.run(["status", "--config", config]).stdout.contains("webhook events: 1 waiting, 0 given up\n"))
            let again = try await store.claimWebhookEvents(
                owner: "node/2", limit: 10, leaseDuration: .seconds(60), now: Date())
            #expect(again.map(\.deliveryID) == [event.deliveryID] && again.first?.attempts == 0)
            #expect(try Self.run(["webhook", "redeliver", "--config", config, "--all"]).stdout.contains("sent again: 0 events"))
        }
    }

    /// Issue 17 §11 (part): `key create`, `key list` and `key revoke` on the real binary, on each store: the secret
    /// is printed once (and works), never listed; an expiry and the last use are listed; a revoked key is refused.
    @Test(arguments: Backend.available)
    func keyCreateListRevoke(_ backend: Backend) async throws {
        try await Self.withInitializedGateway(backend) { config, directory, store in
            let created = try Self.run(
                ["key", "create", "--config", config, "--app-id", "shop", "--name", "backend-eu", "--expires-in-days", "30", "--json"])
            #expect(created.status == 0, "\(created.stderr)")
            let key = try #require(try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])
            let secret = try #require(key["key"] as? String)
            let id = try #require(key["id"] as? String)
            #expect(key["name"] as? String == "backend-eu" && key["appId"] as? String == "shop" && key["expired"] as? Bool == false)
            #expect(try await store.authenticate(bearer: secret) == "shop")
            try await store.touchAPIKey(id: id, at: Date(timeIntervalSince1970: 1_900_000_000))

            let list = try Self.run(["key", "list", "--config", config, "--json"])
            #expect(list.status == 0, "\(list.stderr)")
            let keys = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            #expect(Set(keys.compactMap { $0["name"] as? String }) == ["init", "backend-eu"])
            let listed = try #require(keys.first { $0["id"] as? String == id })
            #expect(listed["lastUsedAt"] as? String == "2030-03-17T17:46:40Z")
            #expect((listed["expiresAt"] as? String)?.isEmpty == false && listed["key"] == nil)
            let text = try Self.run(["key", "list", "--config", config, "--app-id", "shop"])
            #expect(text.stdout.contains(id) && text.stdout.contains("backend-eu") && text.stdout.contains("expires"))
            for output in [list.stdout, text.stdout] { #expect(!output.contains(secret), "a key's secret was listed") }

            #expect(try Self.run(["key", "create", "--config", config, "--app-id", "nope", "--name", "x"]).status != 0)
            #expect(try Self.run(["key", "create", "--config", config, "--app-id", "shop", "--name", ""]).status != 0)
            let revoked = try Self.run(["key", "revoke", "--config", config, "--id", id])
            #expect(revoked.status == 0 && revoked.stdout.contains(id))
            #expect(try await store.authenticate(bearer: secret) == nil)
            let again = try Self.run(["key", "revoke", "--config", config, "--id", id])
            #expect(again.status != 0 && again.stderr.contains("no API key"))
        }
    }

    /// Issue 17 §11: `app add`, `app set-apns`, `identity rotate|list|retire` and `app remove` on the real binary,
    /// on each store: the new app's key authenticates and its identity file is 0600; a `.p8` others may read is
    /// refused; a rotation keeps the old identity for receipts until it is retired (only with the operator's word,
    /// never the sealing one); a removal asks for `--yes`, then takes the app's keys with it.
    @Test(arguments: Backend.available)
    func appAddRotateRetireRemove(_ backend: Backend) async throws {
        try await Self.withInitializedGateway(backend) { config, directory, store in
            let p8 = directory.appendingPathComponent("AuthKey_NEWSKEY001.p8").path
            try APNsKeyGenerator.writeNewKey(to: p8)
            let added = try Self.run([
                "app", "add", "--config", config, "--app-id", "news", "--topic", "com.example.news", "--apns-key", p8,
                "--key-id", "NEWSKEY001", "--team-id", "TEAM123456", "--json",
            ])
            #expect(added.status == 0, "\(added.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(added.stdout.utf8)) as? [String: Any])
            let secret = try #require(object["key"] as? String)
            #expect(try await store.authenticate(bearer: secret) == "news")
            let news = try #require(try await store.app(id: "news"))
            #expect(news.topic == "com.example.news" && news.apnsKeyPath == p8 && news.apnsKeyID == "NEWSKEY001")
            #expect(try Self.mode(news.serverIdentityPath) == 0o600)
            let firstKey = try ServerIdentity(contentsOfFile: news.serverIdentityPath).keyID.hex
            #expect(!added.stdout.contains("SPSK1:"))
            let again = try Self.run(["app", "add", "--config", config, "--app-id", "news", "--topic", "t"])
            #expect(again.status != 0 && again.stderr.contains("exists"))
            #expect(try Self.run(["app", "add", "--config", config, "--app-id", "bad id", "--topic", "t"]).status != 0)

            // set-apns: a key file others may read is refused and changes nothing; a good one is stored.
            let other = directory.appendingPathComponent("AuthKey_NEWSKEY002.p8").path
            try APNsKeyGenerator.writeNewKey(to: other)
            chmod(other, 0o644)
            let loose = try Self.run([
                "app", "set-apns", "--config", config, "--app-id", "news", "--apns-key", other, "--key-id", "NEWSKEY002",
                "--team-id", "TEAM123456",
            ])
            #expect(loose.status != 0 && loose.stderr.contains("chmod 600"))
            #expect(try await store.app(id: "news")?.apnsKeyID == "NEWSKEY001")
            chmod(other, 0o600)
            let set = try Self.run([
                "app", "set-apns", "--config", config, "--app-id", "news", "--apns-key", other, "--key-id", "NEWSKEY002",
                "--team-id", "TEAM654321",
            ])
            #expect(set.status == 0, "\(set.stderr)")
            let reset = try #require(try await store.app(id: "news"))
            #expect(reset.apnsKeyPath == other && reset.apnsKeyID == "NEWSKEY002" && reset.teamID == "TEAM654321")

            // identity rotate, list, retire.
            let rotated = try Self.run(["identity", "rotate", "--config", config, "--app-id", "news", "--json"])
            #expect(rotated.status == 0, "\(rotated.stderr)")
            let new = try #require(try JSONSerialization.jsonObject(with: Data(rotated.stdout.utf8)) as? [String: Any])
            let newKey = try #require(new["keyId"] as? String)
            let afterRotation = try #require(try await store.app(id: "news"))
            #expect(afterRotation.previousIdentityPaths == [news.serverIdentityPath])
            #expect(try ServerIdentity(contentsOfFile: afterRotation.serverIdentityPath).keyID.hex == newKey)
            #expect(try Self.mode(afterRotation.serverIdentityPath) == 0o600 && newKey != firstKey)
            let list = try Self.run(["identity", "list", "--config", config, "--app-id", "news", "--json"])
            let identities = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            #expect(identities.map { $0["keyId"] as? String } == [newKey, firstKey])
            #expect(identities.map { $0["role"] as? String } == ["sealing", "receipts"])
            #expect(!list.stdout.contains("SPSK1:"))
            let unconfirmed = try Self.run(["identity", "retire", "--config", config, "--app-id", "news", "--key-id", firstKey])
            #expect(unconfirmed.status != 0 && unconfirmed.stderr.contains("--apps-pin-new"))
            let sealing = try Self.run([
                "identity", "retire", "--config", config, "--app-id", "news", "--key-id", newKey, "--apps-pin-new",
            ])
            #expect(sealing.status != 0 && sealing.stderr.contains("sealing identity"))
            let retired = try Self.run([
                "identity", "retire", "--config", config, "--app-id", "news", "--key-id", firstKey, "--apps-pin-new",
            ])
            #expect(retired.status == 0, "\(retired.stderr)")
            #expect(try await store.app(id: "news")?.previousIdentityPaths == [])
            // A rotation to an identity made beforehand (its key already pinned by the apps); never to one in use.
            let prepared = try ServerIdentity.generate()
            let preparedPath = directory.appendingPathComponent("news-next.identity").path
            try prepared.write(toFile: preparedPath)
            let toPrepared = try Self.run([
                "identity", "rotate", "--config", config, "--app-id", "news", "--identity", preparedPath,
            ])
            #expect(toPrepared.status == 0 && toPrepared.stdout.contains(prepared.publicKeyText), "\(toPrepared.stderr)")
            #expect(try await store.app(id: "news")?.serverIdentityPath == preparedPath)
            #expect(try await store.app(id: "news")?.previousIdentityPaths == [afterRotation.serverIdentityPath])
            let inUse = try Self.run([
                "identity", "rotate", "--config", config, "--app-id", "news", "--identity", afterRotation.serverIdentityPath,
            ])
            #expect(inUse.status != 0 && inUse.stderr.contains("already"))

            // remove: asks for --yes, then removes the app and its keys; the other app stays.
            let unasked = try Self.run(["app", "remove", "--config", config, "--app-id", "news"])
            #expect(unasked.status != 0 && unasked.stderr.contains("--yes"))
            #expect(try await store.app(id: "news") != nil)
            let removed = try Self.run(["app", "remove", "--config", config, "--app-id", "news", "--yes", "--json"])
            #expect(removed.status == 0, "\(removed.stderr)")
            let removal = try #require(try JSONSerialization.jsonObject(with: Data(removed.stdout.utf8)) as? [String: Any])
            #expect(removal["appId"] as? String == "news" && removal["apiKeys"] as? Int == 1)
            #expect(try await store.app(id: "news") == nil)
            #expect(try await store.authenticate(bearer: secret) == nil)
            #expect(try await store.app(id: "shop") != nil)
            #expect(try Self.run(["app", "remove", "--config", config, "--app-id", "news", "--yes"]).status != 0)
        }
    }

    /// Issue 17 §11 (part): `app list` and `app show`, as text and `--json`, name the app's settings and its server
    /// identity's public key (what the app pins), never a private key.
    @Test func appListAndShowDescribeAppsWithoutSecrets() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-apps-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try Self.initialize(directory)
        let config = directory.appendingPathComponent("gateway.json").path
        let identityPath = directory.appendingPathComponent("shop.identity").path
        let identityText = try String(contentsOfFile: identityPath, encoding: .utf8)
        let publicKey = try ServerIdentity(contentsOfFile: identityPath).publicKeyText

        let list = try Self.run(["app", "list", "--config", config, "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        let apps = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(apps.count == 1)
        #expect(apps.first?["id"] as? String == "shop")
        #expect(apps.first?["topic"] as? String == "com.example.shop")
        #expect(apps.first?["teamId"] as? String == "TEAM123456")
        #expect(apps.first?["apnsKeyId"] as? String == "KEY1234567")
        #expect(apps.first?["serverIdentityPath"] as? String == identityPath)
        #expect(apps.first?["serverPublicKey"] as? String == publicKey)

        let show = try Self.run(["app", "show", "--config", config, "--app-id", "shop"])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("com.example.shop") && show.stdout.contains(publicKey))
        let showJSON = try Self.run(["app", "show", "--config", config, "--app-id", "shop", "--json"])
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(showJSON.stdout.utf8)) as? [String: Any])
        #expect(shown["serverPublicKey"] as? String == publicKey)
        for output in [list.stdout, show.stdout, showJSON.stdout] {
            #expect(!output.contains(identityText.trimmingCharacters(in: .whitespacesAndNewlines)), "the private key was printed")
            #expect(!output.contains("SPSK1:"))
        }

        // A mistyped command is named as such, with the nearest command (ArgumentParser alone reported the first
        // option it could not place: "Unknown option '--config'").
        let typo = try Self.run(["serv", "--config", config])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("unknown command 'serv' for 'sealed-push-gateway'; did you mean 'serve'?"), "\(typo.stderr)")
        let nested = try Self.run(["identity", "rotat", "--config", config, "--app-id", "shop"])
        #expect(nested.status == 64)
        #expect(nested.stderr.contains("unknown command 'rotat' for 'sealed-push-gateway identity'; did you mean 'rotate'?"))
        #expect(nested.stderr.contains("See 'sealed-push-gateway identity --help'"))
        #expect(try Self.run(["identity", "list", "--config", config, "--app-id", "shop"]).status == 0)

        // The plural spellings (issue 17 §11 names them `apps` and `keys`) are the same commands.
        let plural = try Self.run(["apps", "list", "--config", config, "--json"])
        #expect(plural.status == 0 && plural.stdout == list.stdout, "\(plural.stderr)")
        let keys = try Self.run(["keys", "list", "--config", config, "--json"])
        #expect(keys.status == 0, "\(keys.stderr)")
        let listedKeys = try #require(try JSONSerialization.jsonObject(with: Data(keys.stdout.utf8)) as? [[String: Any]])
        #expect(listedKeys.compactMap { $0["name"] as? String } == ["init"])

        // A database the command cannot reach: the store's message alone, at once (not after the 15-minute migration
        // deadline, and not "GatewayStoreError(database): …").
        let unreachable = try Self.run(
            ["app", "list", "--config", config],
            environment: ["SEALEDPUSH_GATEWAY_DATABASE": "postgres://postgres@127.0.0.1:1/gateway"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.hasPrefix("Error: cannot connect to PostgreSQL at 127.0.0.1:1 (database gateway, user postgres): "),
                "\(unreachable.stderr)")

        let missing = try Self.run(["app", "show", "--config", config, "--app-id", "nope"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no app 'nope'"))
    }

    /// `backup` on the real binary: a SQLite gateway's database copied to a new 0600 file that a gateway configuration
    /// can point at (restore), with progress on standard error; a PostgreSQL gateway is told to use pg_dump.
    @Test(arguments: Backend.available)
    func backupWritesARestorableCopy(_ backend: Backend) async throws {
        try await Self.withInitializedGateway(backend) { config, directory, store in
            try await store.putApp(
                GatewayApp(
                    id: "news", topic: "com.example.news", teamID: "TEAM123456", apnsKeyID: "KEY1234567",
                    apnsKeyPath: "/etc/k.p8", serverIdentityPath: "/etc/news.identity"),
                now: Date())
            let out = directory.appendingPathComponent("copy.sqlite").path
            let result = try Self.run(["backup", "--config", config, "--out", out])
            guard backend == .sqlite else {
                #expect(result.status == 1)
                #expect(result.stderr.contains("PostgreSQL: back it up with pg_dump"), "\(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: out))
                return
            }
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasPrefix("backup: \(out) (") && result.stdout.contains("integrity ok"))
            #expect(result.stderr.contains("backup: 100 % ("))
            let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)
            // Restore: a configuration naming the copy lists both apps.
            var json = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
            json["database"] = "sqlite:copy.sqlite"
            let restored = directory.appendingPathComponent("restored.json").path
            try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: restored))
            let list = try Self.run(["app", "list", "--config", restored, "--json"])
            let apps = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            #expect(Set(apps.compactMap { $0["id"] as? String }) == ["shop", "news"])
            // Never over an existing file.
            let again = try Self.run(["backup", "--config", config, "--out", out])
            #expect(again.status == 1 && again.stderr.contains("exists"))
        }
    }

    /// `status` on the real binary, each store: nothing running yet, then a live node (this test's own process, with
    /// a fresh heartbeat) and a stale one (a heartbeat an hour old), as text and JSON.
    @Test(arguments: Backend.available)
    func statusListsNodesAndJobs(_ backend: Backend) async throws {
        try await Self.withInitializedGateway(backend) { config, _, store in
            let empty = try Self.run(["status", "--config", config])
            #expect(empty.status == 0, "\(empty.stderr)")
            #expect(
                empty.stdout
                    == "nodes: none (no serve with delivery on is running)\njobs: none queued or claimed\n"
                    + "webhook events: none waiting or given up\n")

            let now = Date()
            let live = NodeInstance.current(nodeID: "gw-live", now: now)
            var old = NodeInstance.current(nodeID: "gw-old", now: now.addingTimeInterval(-3_600))
            old.host = "elsewhere"  // not this machine: only its heartbeat's age decides
            _ = try await store.takeOverNode(live, replacing: nil, now: now)
            _ = try await store.takeOverNode(old, replacing: nil, now: now.addingTimeInterval(-3_600))
            let text = try Self.run(["status", "--config", config])
            #expect(text.status == 0, "\(text.stderr)")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "nodes:")
            #expect(lines.contains { $0.hasPrefix("  gw-live  live   pid \(live.pid) on ") && $0.hasSuffix(", 0 jobs leased") }, "\(text.stdout)")
            #expect(lines.contains { $0.hasPrefix("  gw-old  stale  pid \(old.pid) on elsewhere") && $0.contains("heartbeat 60 min ago") }, "\(text.stdout)")
            let json = try Self.run(["status", "--config", config, "--json"])
            let status = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let nodes = try #require(status["nodes"] as? [[String: Any]])
            #expect(nodes.compactMap { $0["nodeId"] as? String } == ["gw-live", "gw-old"])
            #expect(nodes.compactMap { $0["live"] as? Bool } == [true, false])
            #expect((status["apps"] as? [Any])?.isEmpty == true)
            #expect(status["webhook"] as? [String: Int] == ["waiting": 0, "givenUp": 0])
        }
    }

    /// `check` reports what `serve` would need, line by line, and changes nothing: the database file's bytes are the
    /// same after it; a key file others can read is a warning, a broken one, a newer schema or an unreachable
    /// database a failure (status 1).
    @Test func checkReportsWithoutChangingAnything() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-check-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyPath = directory.appendingPathComponent("AuthKey.p8").path
        let keygen = Process()
        keygen.executableURL = Self.binary.deletingLastPathComponent().appendingPathComponent("sealed-push")
        keygen.arguments = ["apns-keygen", "--out", keyPath]
        keygen.standardOutput = FileHandle.nullDevice
        try keygen.run()
        keygen.waitUntilExit()
        let gateway = directory.appendingPathComponent("gw")
        let initialized = try Self.run([
            "init", "--dir", gateway.path, "--app-id", "shop", "--topic", "com.example.shop", "--team-id", "TEAM123456",
            "--key-id", "KEY1234567", "--apns-key", keyPath,
        ])
        #expect(initialized.status == 0, "\(initialized.stderr)")
        let config = gateway.appendingPathComponent("gateway.json").path
        let database = gateway.appendingPathComponent("gateway.sqlite").path
        func line(_ output: String, _ check: String) -> String? {
            output.split(separator: "\n").map(String.init).first { $0.split(separator: " ").dropFirst().first.map(String.init) == check }
        }

        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let good = try Self.run(["check", "--config", config])
        #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
        #expect(line(good.stdout, "configuration")?.hasPrefix("ok ") == true)
        #expect(line(good.stdout, "database")?.contains("schema version") == true)
        #expect(good.stdout.contains("ok    app shop       APNs key KEY1234567 (team TEAM123456), seals with "), "\(good.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before, "check changed the database file")
        let json = try Self.run(["check", "--config", config, "--json"])
        let findings = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: String]])
        #expect(findings.allSatisfy { $0["status"] == "ok" } && findings.count == good.stdout.split(separator: "\n").count)

        // A key others can read: a warning, still status 0.
        chmod(keyPath, 0o644)
        let exposed = try Self.run(["check", "--config", config])
        #expect(exposed.status == 0)
        #expect(exposed.stdout.contains("warn  app shop       the APNs key \(keyPath) is mode 644: others can read it (chmod 600)"))
        chmod(keyPath, 0o600)

        // A server identity that is not one: a failure naming the file.
        let identity = gateway.appendingPathComponent("shop.identity").path
        let identityText = try Data(contentsOf: URL(fileURLWithPath: identity))
        try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: identity))
        let broken = try Self.run(["check", "--config", config])
        #expect(broken.status == 1)
        #expect(line(broken.stdout, "app")?.hasPrefix("FAIL") == true && broken.stdout.contains(identity), "\(broken.stdout)")
        try identityText.write(to: URL(fileURLWithPath: identity))

        // A schema newer than this gateway's, and a database that cannot be reached.
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [database, "INSERT INTO schema_version (version, name, applied_at) VALUES (999, 'future', 0)"]
        try sqlite.run()
        sqlite.waitUntilExit()
        let newer = try Self.run(["check", "--config", config])
        #expect(newer.status == 1)
        #expect(line(newer.stdout, "database")?.contains("schema version 999 is newer than this gateway's") == true, "\(newer.stdout)")
        let unreachable = try Self.run(
            ["check", "--config", config], environment: ["SEALEDPUSH_GATEWAY_DATABASE": "postgres://postgres@127.0.0.1:1/gw"])
        #expect(unreachable.status == 1)
        #expect(line(unreachable.stdout, "database")?.contains("cannot connect to PostgreSQL at 127.0.0.1:1") == true)
        let missing = try Self.run(
            ["check", "--config", config], environment: ["SEALEDPUSH_GATEWAY_DATABASE": "sqlite:nothing-here.sqlite"])
        #expect(missing.status == 1 && missing.stdout.contains("no SQLite database at"))
        #expect(!FileManager.default.fileExists(atPath: gateway.appendingPathComponent("nothing-here.sqlite").path))
    }

    /// With `delivery.proxy`, `check` asks the proxy for a tunnel to APNs and to FCM as delivery would, and reports the
    /// proxy's refusal as a failure with its answer.
    @Test func checkAsksTheProxyForTunnels() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-proxy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try Self.initialize(directory)
        let config = directory.appendingPathComponent("gateway.json").path
        func proxyLine(_ output: String) -> String? {
            output.split(separator: "\n").map(String.init).first { $0.dropFirst(6).hasPrefix("proxy ") }
        }
        // The proxy tunnels to a port that listens (its own): APNs and FCM are pointed there.
        for (policy, expected) in [
            (ConnectProxy.Policy.open, "ok"), (ConnectProxy.Policy.refuse(status: 403), "FAIL"),
        ] {
            let proxy = try await ConnectProxy(policy: policy)
            let target = "127.0.0.1:\(proxy.port)"
            let result = try Self.run(
                ["check", "--config", config],
                environment: [
                    "SEALEDPUSH_GATEWAY_PROXY": "http://\(target)", "SEALEDPUSH_GATEWAY_APNS_PRODUCTION_URL": "https://\(target)",
                    "SEALEDPUSH_GATEWAY_FCM_URL": "https://\(target)",
                ])
            let line = try #require(proxyLine(result.stdout), "\(result.stdout)")
            #expect(line.hasPrefix(expected), "\(line)")
            if expected == "ok" {
                #expect(result.status == 0, "\(result.stdout)")
                #expect(line.contains("http://\(target) opens tunnels to \(target) and \(target)"), "\(line)")
                #expect(proxy.requests.count == 2 && proxy.requests.allSatisfy { $0.opened && $0.target == target })
            } else {
                #expect(result.status == 1)
                #expect(line.contains("refused the tunnel: 403"), "\(line)")
            }
            await proxy.stop()
        }
    }

    /// `metricsListen` serves `/metrics` on an address of its own and takes it off the API, which anyone with a route
    /// to the gateway can reach (its counters name apps).
    @Test func metricsListenMovesMetricsOffTheAPI() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-metrics-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try Self.initialize(directory)
        let serve = try Self.serve(directory, [
            "SEALEDPUSH_GATEWAY_METRICS_LISTEN": "127.0.0.1:0", "SEALEDPUSH_GATEWAY_DELIVERY": "off",
            "SEALEDPUSH_GATEWAY_LOG_FORMAT": "json",  // and its log lines are JSON objects (checked at the end)
        ])
        defer { if serve.process.isRunning { serve.process.terminate() } }
        let ports = try serve.ports(["listening on port ", "metrics listening on port "])
        let (api, scrape) = (ports[0], ports[1])
        let client = HTTPTestClient(port: api)
        let metricsClient = HTTPTestClient(port: scrape)
        #expect(try await client.send("GET", "/v1/apps/shop/devices/x", key: key).status == 404)

        let onAPI = try await client.send("GET", "/metrics")
        #expect(onAPI.status == 404)
        #expect(onAPI.json["code"] as? String == "notFound")
        #expect((onAPI.json["message"] as? String)?.contains("metricsListen") == true)
        #expect(!onAPI.text.contains("sealedpush_gateway_"))
        let scraped = try await metricsClient.send("GET", "/metrics")
        #expect(scraped.status == 200)
        #expect(scraped.text.contains("sealedpush_gateway_accepted_total"))
        // The metrics listener has nothing else: not the API, not the health check.
        let elsewhere = try await metricsClient.send("GET", "/v1/apps/shop/devices/x", key: key)
        #expect(elsewhere.status == 404 && elsewhere.json["code"] as? String == "notFound")
        #expect(try await metricsClient.send("GET", "/healthz").status == 404)

        // A second process on the same addresses is told which listener and address are taken.
        let config = directory.appendingPathComponent("gateway.json").path
        for (variables, listener, port) in [
            (["SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:\(api)"], "the API", api),
            (["SEALEDPUSH_GATEWAY_METRICS_LISTEN": "127.0.0.1:\(scrape)"], "/metrics (metricsListen)", scrape),
        ] {
            let second = try Self.run(
                ["serve", "--config", config],
                environment: ["SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:0", "SEALEDPUSH_GATEWAY_DELIVERY": "off"]
                    .merging(variables) { _, given in given })
            #expect(second.status == 1)
            #expect(second.stderr.contains(
                "Error: cannot listen on 127.0.0.1:\(port) for \(listener): the address is in use"), "\(second.stderr)")
        }

        try await serve.stop()
        let logged = String(decoding: serve.err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = logged.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!lines.isEmpty && lines.allSatisfy { $0 != nil }, "\(logged)")
        #expect(lines.contains { $0?["message"] as? String == "metrics listening" })
    }

    /// `SIGHUP` reads the rate limits again: raised, a refused app is admitted at once; a file that no longer loads
    /// keeps the limits in use; lowered again, the app is refused again. (`{}` is admitted as a `422`, refused as a
    /// `429`: the limit is checked before the body.)
    @Test func sighupReloadsTheRateLimits() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-hup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try Self.initialize(directory)
        let config = directory.appendingPathComponent("gateway.json")
        let original = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as? [String: Any])
        func limit(_ sendsPerSecond: Double, burst: Int, logLevel: String = "info") throws {
            var json = original
            json["rateLimits"] = ["apps": ["shop": ["sendsPerSecond": sendsPerSecond, "sendBurst": burst]]]
            json["logLevel"] = logLevel
            try JSONSerialization.data(withJSONObject: json).write(to: config)
        }
        try limit(0.001, burst: 1)
        let serve = try Self.serve(directory, ["SEALEDPUSH_GATEWAY_DELIVERY": "off"])
        defer { if serve.process.isRunning { serve.process.terminate() } }
        let client = HTTPTestClient(port: try serve.ports(["listening on port "])[0])
        func status() async throws -> Int {
            try await client.send("POST", "/v1/apps/shop/notifications", key: key, body: Data("{}".utf8)).status
        }
        /// Sends until one answers `wanted` (a reload is asynchronous to the signal), at most 10 s.
        func eventually(_ wanted: Int) async throws -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if try await status() == wanted { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
            return false
        }
        #expect(try await status() == 422)  // the one token (then `{}` names no recipient)
        #expect(try await status() == 429)

        try limit(1_000, burst: 1_000, logLevel: "debug")  // and a setting a reload does not apply
        kill(serve.process.processIdentifier, SIGHUP)
        #expect(try await eventually(422), "the raised limit was not applied")

        // A file that no longer loads: the limits in use stay.
        var broken = original
        broken["rateLimit"] = [:]  // misspelled: refused
        try JSONSerialization.data(withJSONObject: broken).write(to: config)
        kill(serve.process.processIdentifier, SIGHUP)
        try await Task.sleep(for: .milliseconds(500))
        for _ in 0..<5 { #expect(try await status() == 422) }

        try limit(0.001, burst: 1)
        kill(serve.process.processIdentifier, SIGHUP)
        #expect(try await eventually(429), "the lowered limit was not applied")

        try await serve.stop()
        let logged = String(decoding: serve.err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(logged.components(separatedBy: "rate limits reloaded").count - 1 == 2, "\(logged)")
        #expect(logged.contains("configuration reload failed") && logged.contains("unknown setting \"rateLimit\""))
        #expect(logged.contains("changed settings that take a restart") && logged.contains("settings=logLevel"))
    }

    @Test func serveAnswersAndExitsZeroOnSIGTERM() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-serve-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try Self.initialize(directory)
        let serve = try Self.serve(directory, [:])
        defer { if serve.process.isRunning { serve.process.terminate() } }
        let bound = try serve.ports(["listening on port "])[0]
        let client = HTTPTestClient(port: bound)
        #expect(try await client.send("GET", "/healthz").status == 200)
        #expect(try await client.send("GET", "/v1/apps/shop/devices/x", key: key).status == 404)
        #expect(try await client.send("GET", "/v1/apps/shop/devices/x").status == 401)
        let metrics = try await client.send("GET", "/metrics")
        #expect(metrics.text.contains("sealedpush_gateway_accepted_total"))

        try await serve.stop()
        #expect(serve.process.terminationReason == .exit)
    }

    /// The release's version is the same wherever the gateway names it: `--version`, the start-up log line and
    /// `sealedpush_gateway_build_info` (a Semantic Versioning 2.0.0 string; see ``SealedPushVersion``).
    @Test func versionIsNamedAlikeEverywhere() async throws {
        let printed = try Self.run(["--version"])
        #expect(printed.status == 0)
        let version = printed.stdout.trimmingCharacters(in: .newlines)
        #expect(version == SealedPushVersion.current)
        #expect(!version.isEmpty && !version.contains(" "))

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-version-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try Self.initialize(directory)
        let serve = try Self.serve(directory, ["SEALEDPUSH_GATEWAY_DELIVERY": "off"])
        defer { if serve.process.isRunning { serve.process.terminate() } }
        let client = HTTPTestClient(port: try serve.ports(["listening on port "])[0])
        let metrics = try await client.send("GET", "/metrics").text
        #expect(metrics.contains("\nsealedpush_gateway_build_info{version=\"\(version)\"} 1"), "\(metrics.prefix(400))")
        #expect(metrics.contains("# HELP sealedpush_gateway_build_info "))
        try await serve.stop()
        let logged = String(decoding: serve.err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let start = logged.split(separator: "\n").first { $0.contains("sealed-push-gateway starting") }
        #expect(start?.contains("version=\(version)") == true, "\(logged.prefix(600))")
    }

    /// A `serve` of the gateway in `directory` on free loopback ports, with `environment` added.
    static func serve(_ directory: URL, _ environment: [String: String]) throws -> RunningServe {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--config", directory.appendingPathComponent("gateway.json").path]
        process.environment = ProcessInfo.processInfo.environment
            .merging(["SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:0"].merging(environment) { _, given in given }) { _, given in given }
        let serve = RunningServe(process: process, out: Pipe(), err: Pipe())
        process.standardOutput = serve.out
        process.standardError = serve.err
        try process.run()
        return serve
    }

    /// A `serve` process and its output.
    struct RunningServe {
        let process: Process
        let out: Pipe
        let err: Pipe

        /// The ports its standard output names after each prefix (`listening on port `), waiting up to a minute.
        func ports(_ prefixes: [String]) throws -> [Int] {
            var buffer = Data()
            let deadline = Date().addingTimeInterval(60)
            func found() -> [Int]? {
                let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n")
                let ports = prefixes.compactMap { prefix in
                    lines.first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
                }
                return ports.count == prefixes.count ? ports : nil
            }
            while found() == nil, Date() < deadline {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
            }
            return try #require(found(), "serve did not print \(prefixes): \(String(decoding: buffer, as: UTF8.self))")
        }

        /// SIGTERM, then waits up to 30 s for a clean exit (status 0).
        func stop() async throws {
            kill(process.processIdentifier, SIGTERM)
            let exited = Date().addingTimeInterval(30)
            while process.isRunning, Date() < exited { try await Task.sleep(for: .milliseconds(50)) }
            #expect(!process.isRunning && process.terminationStatus == 0)
        }
    }
}
