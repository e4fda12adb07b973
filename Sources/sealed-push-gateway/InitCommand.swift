import ArgumentParser
import Foundation
import Logging
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `sealed-push-gateway init`: a ready configuration, a fresh server identity, the app and its first API key.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a ready gateway configuration with a fresh server identity, create the app and print its first API key once.")

    @Option(help: "The directory for the configuration, the server identity and (by default) the SQLite database.")
    var dir: String

    @Option(name: .customLong("app-id"), help: "The app's id in the gateway (the {appId} of the API).")
    var appID = "default"

    @Option(help: "The APNs topic (the app's bundle id).")
    var topic: String

    @Option(name: .customLong("team-id"), help: "The Apple developer team id that signs provider tokens.")
    var teamID = ""

    @Option(name: .customLong("key-id"), help: "The id of the APNs signing key.")
    var keyID = ""

    @Option(name: .customLong("apns-key"), help: "Path of the APNs .p8 key file (referenced, not copied; keep it 0600).")
    var apnsKey: String?

    @Option(help: "sqlite:PATH (relative to --dir) or postgres://user[:password]@host[:port]/database.")
    var database = "sqlite:gateway.sqlite"

    @Option(help: "host:port to listen on.")
    var listen = "127.0.0.1:8080"

    /// The same rules as `app add` for what both take: the app id is the API's `{appId}` (and names the identity
    /// file), the topic 1 to 255 bytes, Apple's ids 10 characters of A-Z 0-9 when given.
    func validate() throws {
        guard Identifier.isValid(appID) else {
            throw ValidationError("--app-id must be 1-128 of A-Z a-z 0-9 . _ ~ - (got '\(appID)')")
        }
        guard !topic.isEmpty, topic.utf8.count <= 255 else { throw ValidationError("--topic must be 1-255 bytes") }
        if apnsKey != nil, teamID.isEmpty || keyID.isEmpty {
            throw ValidationError("--apns-key needs --key-id and --team-id")
        }
    }

    func run() async throws {
        // Files this process creates (the SQLite database and its WAL: tokens, key digests, sealed bodies) are
        // the operator's only.
        umask(0o077)
        // The APNs key is checked as `app add` checks it (a P-256 key in a regular file only its owner reads) before
        // anything is written; ids given without a key are checked for their form.
        let reference = try apnsKey.map { try APNsKeyReference(path: $0, keyID: keyID, teamID: teamID) }
        if reference == nil, !teamID.isEmpty || !keyID.isEmpty {
            try APNsKeyReference.checkIDs(keyID: keyID.isEmpty ? nil : keyID, teamID: teamID.isEmpty ? nil : teamID)
        }
        let directory = URL(fileURLWithPath: dir).standardizedFileURL.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw OperatorError("--dir \(directory) is a file; init needs a directory (it is created when missing)")
        }
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Everything init would create must be absent, links included (a dangling one too), before it writes
        // anything: a refused init leaves nothing behind.
        let configPath = directory + "/gateway.json"
        let identityPath = directory + "/\(appID).identity"
        for (path, what) in [(configPath, "the configuration"), (identityPath, "the server identity")] where Self.exists(path) {
            throw OperatorError("\(path) exists (\(what)); init writes a new gateway only, never over a file")
        }

        var configuration = GatewayConfiguration(listen: listen, database: database)
        let written = configuration
        configuration.resolvePaths(against: directory)
        try configuration.validate()
        let sqlitePath = configuration.database.hasPrefix("sqlite:")
            ? String(configuration.database.dropFirst("sqlite:".count)) : nil
        let createsDatabase = sqlitePath.map { !Self.exists($0) } ?? false

        // The server identity: a fresh key in its own 0600 file, written atomically, never over an existing file.
        let identity = try ServerIdentity.generate()
        try identity.write(toFile: identityPath)
        let key = APIKey.generate()
        do {
            let store = try configuration.openStore(logger: Logger(label: "sealed-push.gateway.db"), creating: true)
            do {
                _ = try await store.migrate()
                try await store.putApp(
                    GatewayApp(
                        id: appID, topic: topic, teamID: reference?.teamID ?? teamID, apnsKeyID: reference?.keyID ?? keyID,
                        apnsKeyPath: reference?.path ?? "", serverIdentityPath: identityPath),
                    now: Date())
                try await store.addAPIKey(StoredAPIKey(key: key, appID: appID, label: "init"))  // its digest only
                try await store.close()
            } catch {
                try? await store.close()
                throw error
            }
            // The configuration last: it exists only once the gateway it describes is ready. 0600 (a PostgreSQL URL
            // may carry a password).
            try KeyFile.writeAtomically(try written.encoded(), toPath: configPath, replacingExisting: false)
        } catch {
            // Nothing half made stays: the identity, and the SQLite database if this init created it.
            try? FileManager.default.removeItem(atPath: identityPath)
            if createsDatabase, let sqlitePath {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: sqlitePath + suffix) }
            }
            throw error
        }

        printSummary(configPath: configPath, identityPath: identityPath, identity: identity, key: key, reference: reference)
    }

    /// Whether anything is at `path`, a link (even a dangling one) included.
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    private func printSummary(
        configPath: String, identityPath: String, identity: ServerIdentity, key: APIKey, reference: APNsKeyReference?
    ) {
        print("configuration: \(configPath)")
        print("server identity: \(identityPath) (key id \(identity.keyID.hex); devices pin \(identity.publicKeyText))")
        if reference == nil {
            print("note: no complete APNs key reference (--apns-key, --team-id, --key-id): delivery needs one")
        }
        print("app: \(appID) (topic \(topic))")
        print("API key (shown once; the gateway keeps only its SHA-256): \(key.text)")
    }
}
