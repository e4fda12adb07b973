import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushServer

/// `sealed-push-gateway app add`: another app in a running gateway's database, with its own server identity and a
/// first API key (printed once). Nodes that are running serve it at once (apps are read per request).
struct AppAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an app: its APNs topic and key reference, a fresh server identity (0600), and a first API key printed once.")

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "The new app's id (the {appId} of the API): 1-128 of A-Z a-z 0-9 . _ ~ -.")
    var appID: String

    @Option(help: "The APNs topic (the app's bundle id).")
    var topic: String

    @Option(name: .customLong("team-id"), help: "The Apple developer team id that signs provider tokens.")
    var teamID: String?

    @Option(name: .customLong("key-id"), help: "The id of the APNs signing key.")
    var keyID: String?

    @Option(name: .customLong("apns-key"), help: "Path of the APNs .p8 key file (referenced, not copied; mode 0600).")
    var apnsKey: String?

    @Option(help: "An existing server identity file (0600) to seal with, instead of a fresh one in the configuration's directory.")
    var identity: String?

    @Flag(help: "Print a JSON object instead (for scripts): the app as `app show --json` prints it and its key under `key`.")
    var json = false

    func validate() throws {
        guard Identifier.isValid(appID) else {
            throw ValidationError("--app-id must be 1-128 of A-Z a-z 0-9 . _ ~ - (got '\(appID)')")
        }
        guard !topic.isEmpty, topic.utf8.count <= 255 else { throw ValidationError("--topic must be 1-255 bytes") }
        if (apnsKey == nil) != (keyID == nil) || (apnsKey == nil) != (teamID == nil) {
            throw ValidationError("give --apns-key, --key-id and --team-id together, or none (then `app set-apns` later)")
        }
    }

    func run() async throws {
        umask(0o077)
        let reference = try apnsKey.map { try APNsKeyReference(path: $0, keyID: keyID ?? "", teamID: teamID ?? "") }
        let key = APIKey.generate()
        let (app, createdIdentity) = try await OperatorStore.with(config: config) { store in
            if try await store.app(id: appID) != nil {
                throw OperatorError("app '\(appID)' exists (see `sealed-push-gateway app show --app-id \(appID)`)")
            }
            var identityPath: String
            var created = false
            if let identity {
                identityPath = URL(fileURLWithPath: identity).standardizedFileURL.path
                try OwnerOnlyFile.require(identityPath, option: "--identity")
                do { _ = try ServerIdentity(contentsOfFile: identityPath) } catch let error as SealedPushError {
                    throw OperatorError("--identity: \(error.message)")
                }
            } else {
                // A fresh identity beside the configuration, never over an existing file.
                let directory = URL(fileURLWithPath: config).standardizedFileURL.deletingLastPathComponent().path
                identityPath = directory + "/\(appID).identity"
                try ServerIdentity.generate().write(toFile: identityPath)
                created = true
            }
            let app = GatewayApp(
                id: appID, topic: topic, teamID: reference?.teamID ?? "", apnsKeyID: reference?.keyID ?? "",
                apnsKeyPath: reference?.path ?? "", serverIdentityPath: identityPath)
            do {
                try await store.putApp(app, now: Date())
                try await store.addAPIKey(StoredAPIKey(key: key, appID: appID, label: "app add"))  // its digest only
            } catch {
                if created { try? FileManager.default.removeItem(atPath: identityPath) }
                throw error
            }
            return (app, created)
        }
        let description = AppDescription(app)
        if json {
            struct Added: Encodable {
                let app: AppDescription
                let key: String
                let identityCreated: Bool
            }
            print(try AppDescription.json(Added(app: description, key: key.text, identityCreated: createdIdentity)))
            return
        }
        for line in description.lines { print(line) }
        if reference == nil { print("note: no APNs key yet: `sealed-push-gateway app set-apns` gives it one") }
        print("API key (shown once; the gateway keeps only its SHA-256): \(key.text)")
    }
}
