import ArgumentParser
import Foundation
import Logging
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushServer

/// `sealed-push-gateway app` (or `apps`): the operator's view and changes of the apps in a gateway's database.
struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Add, list, show or remove the gateway's apps, or set an app's APNs or FCM credentials.",
        subcommands: [
            AppListCommand.self, AppShowCommand.self, AppAddCommand.self, AppRemoveCommand.self,
            AppSetAPNsCommand.self, AppSetFCMCommand.self,
        ],
        aliases: ["apps"])
}

/// Opens the store a configuration file names, migrated, for one operator command.
enum OperatorStore {
    /// Opens the store; a SQLite database must exist already (only `init` creates one), so a mistyped path is an
    /// error rather than a new, empty gateway that looks healthy.
    static func open(config: String) async throws -> any GatewayStore {
        // Anything this process creates (SQLite's WAL beside the database) is the operator's only.
        umask(0o077)
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(path: config, environment: ProcessInfo.processInfo.environment)
        } catch let error as GatewayConfigurationError {
            throw OperatorError(error.message)
        }
        let store: any GatewayStore
        do {
            store = try configuration.openStore(logger: Logger(label: "sealed-push.gateway.db"))
        } catch let error as GatewayStoreError {
            throw OperatorError("\(error.message) (`database` in \(config))")
        }
        _ = try await store.migrate()
        return store
    }

    /// Runs `body` on the store a configuration file names, and closes it whatever happens.
    static func with<T>(config: String, _ body: (any GatewayStore) async throws -> T) async throws -> T {
        let store = try await open(config: config)
        do {
            let value = try await body(store)
            try await store.close()
            return value
        } catch {
            try? await store.close()
            throw error
        }
    }

    /// The app with this id, or an ``OperatorError`` that says how to list the apps.
    static func app(_ appID: String, in store: any GatewayStore) async throws -> GatewayApp {
        guard let app = try await store.app(id: appID) else {
            throw OperatorError("no app '\(appID)' in this gateway (see `sealed-push-gateway app list`)")
        }
        return app
    }
}

/// `sealed-push-gateway app list`: one line per app (never a key).
struct AppListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Print each app: its id, APNs topic and key reference, and FCM project.")

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Flag(help: "Print a JSON array instead (for scripts): each app's settings, file paths and server public key.")
    var json = false

    func run() async throws {
        let store = try await OperatorStore.open(config: config)
        let apps: [GatewayApp]
        do { apps = try await store.apps() } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        let descriptions = apps.map(AppDescription.init)
        if json {
            print(try AppDescription.json(descriptions))
        } else {
            for description in descriptions { print(description.line) }
        }
    }
}

/// `sealed-push-gateway app show`: one app in full (never a key).
struct AppShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print one app: APNs topic, team, key id and key file, server identity and its public key, FCM set-up.")

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "The app's id in the gateway.")
    var appID = "default"

    @Flag(help: "Print a JSON object instead (for scripts).")
    var json = false

    func run() async throws {
        let store = try await OperatorStore.open(config: config)
        let app: GatewayApp?
        do { app = try await store.app(id: appID) } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        guard let app else { throw OperatorError("no app '\(appID)' in this gateway (see `sealed-push-gateway app list`)") }
        let description = AppDescription(app)
        if json {
            print(try AppDescription.json(description))
        } else {
            for line in description.lines { print(line) }
        }
    }
}

/// `sealed-push-gateway app set-fcm`: FCM credentials for an app, so its Android devices can register and receive.
struct AppSetFCMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-fcm",
        abstract: "Give an app FCM credentials: its Firebase project, service-account file (0600) and Android application id.",
        discussion: """
            The service-account file is referenced, not copied: it must stay where it is, mode 0600. It is read and \
            checked now (its key, its project) and again when delivery first needs it. Nodes that are running pick \
            the change up within delivery.appRefreshInterval.
            """)

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "The app's id in the gateway.")
    var appID = "default"

    @Option(name: .customLong("service-account"), help: "The Firebase service-account JSON file (mode 0600).")
    var serviceAccount: String

    @Option(help: "The Firebase project id (default: the service-account file's project_id).")
    var project: String?

    @Option(name: .customLong("android-app-id"), help: "The Android application id (package name) the envelopes are bound to.")
    var androidAppID: String

    func validate() throws {
        let bytes = androidAppID.utf8
        guard (1...255).contains(bytes.count),
            bytes.allSatisfy({ $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0)
                || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else {
            throw ValidationError("--android-app-id must be 1-255 of A-Z a-z 0-9 . _ (a package name such as com.example.chat)")
        }
    }

    func run() async throws {
        let path = URL(fileURLWithPath: serviceAccount).standardizedFileURL.path
        let account: FCMServiceAccount
        do { account = try FCMServiceAccount(contentsOfFile: path) } catch let error as SealedPushError {
            throw OperatorError("--service-account: \(error.message)")
        }
        let projectID = project ?? account.projectID
        let store = try await OperatorStore.open(config: config)
        do {
            guard var app = try await store.app(id: appID) else {
                throw OperatorError("no app '\(appID)' in this gateway (see `sealed-push-gateway app list`)")
            }
            app.fcm = FCMAppCredentials(projectID: projectID, serviceAccountPath: path, applicationID: androidAppID)
            try await store.putApp(app, now: Date())
            try await store.close()
        } catch {
            try? await store.close()
            throw error
        }
        print("app \(appID): FCM project \(projectID) as \(account.clientEmail), Android app \(androidAppID)")
    }
}
