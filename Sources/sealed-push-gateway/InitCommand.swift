import ArgumentParser
import Foundation
import Logging
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushServer

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

    func run() async throws {
        // Files this process creates (the SQLite database and its WAL: tokens, key digests, sealed bodies) are
        // the operator's only.
        umask(0o077)
        let directory = URL(fileURLWithPath: dir).standardizedFileURL.path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let configPath = directory + "/gateway.json"
        guard !FileManager.default.fileExists(atPath: configPath) else {
            throw OperatorError("\(configPath) exists; init writes a new gateway only")
        }
        var apnsKeyPath = ""
        if let apnsKey {
            apnsKeyPath = URL(fileURLWithPath: apnsKey).standardizedFileURL.path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: apnsKeyPath, isDirectory: &isDirectory), !isDirectory.boolValue
            else { throw OperatorError("--apns-key \(apnsKeyPath) is not a file") }
        }

        var configuration = GatewayConfiguration(listen: listen, database: database)
        let written = configuration
        configuration.resolvePaths(against: directory)
        try configuration.validate()

        // The server identity: a fresh key in its own 0600 file, written atomically, never over an existing file.
        let identityPath = directory + "/\(appID).identity"
        let identity = try ServerIdentity.generate()
        try identity.write(toFile: identityPath)

        let store = try configuration.openStore(logger: Logger(label: "sealed-push.gateway.db"))
        let key = APIKey.generate()
        do {
            _ = try await store.migrate()
            try await store.putApp(
                GatewayApp(
                    id: appID, topic: topic, teamID: teamID, apnsKeyID: keyID, apnsKeyPath: apnsKeyPath,
                    serverIdentityPath: identityPath),
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

        print("configuration: \(configPath)")
        print("server identity: \(identityPath) (key id \(identity.keyID.hex); devices pin \(identity.publicKeyText))")
        if apnsKeyPath.isEmpty || teamID.isEmpty || keyID.isEmpty {
            print("note: no complete APNs key reference (--apns-key, --team-id, --key-id): delivery needs one")
        }
        print("app: \(appID) (topic \(topic))")
        print("API key (shown once; the gateway keeps only its SHA-256): \(key.text)")
    }
}
