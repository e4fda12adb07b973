import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushGateway

/// `sealed-push-gateway key` (or `keys`): the apps' API keys — create one (its secret shown once), list them (never a secret
/// or a digest), revoke one. The change holds at once on every node sharing the database (keys are read per request).
struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Create, list or revoke an app's API keys.",
        subcommands: [KeyCreateCommand.self, KeyListCommand.self, KeyRevokeCommand.self],
        aliases: ["keys"])

    /// One key as `list` and `create --json` print it.
    struct Description: Encodable {
        var id: String
        var appId: String
        var name: String
        var createdAt: String
        var expiresAt: String?
        var lastUsedAt: String?
        var expired: Bool
        var key: String?

        init(_ stored: StoredAPIKey, now: Date, secret: String? = nil) {
            id = stored.id
            appId = stored.appID
            name = stored.label
            createdAt = Self.format(stored.createdAt)
            expiresAt = stored.expiresAt.map(Self.format)
            lastUsedAt = stored.lastUsedAt.map(Self.format)
            expired = stored.isExpired(at: now)
            key = secret
        }

        static func format(_ date: Date) -> String { DeviceRegistration.formatDate(date) }

        var line: String {
            "\(id)  app \(appId)  name \(name.isEmpty ? "-" : name)  created \(createdAt)  "
                + "last used \(lastUsedAt ?? "never")  "
                + (expiresAt.map { (expired ? "expired " : "expires ") + $0 } ?? "no expiry")
        }
    }
}

/// `sealed-push-gateway key create`: a new API key for an app; the secret is printed once and only its SHA-256 kept.
struct KeyCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create an API key for an app and print it once (the gateway keeps its SHA-256).")

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "The app the key acts for.")
    var appID = "default"

    @Option(help: "A name for operators (`backend-eu`, `ci`): 1 to 64 printable characters, not secret.")
    var name: String

    @Option(name: .customLong("expires-in-days"), help: "Refuse the key after this many days (1 to 3650; default: never).")
    var expiresInDays: Int?

    @Flag(help: "Print a JSON object (with the key under `key`) instead.")
    var json = false

    func validate() throws {
        guard (1...64).contains(name.count), name.unicodeScalars.allSatisfy(Self.isPrintable)
        else {
            throw ValidationError(
                "--name must be 1 to 64 printable characters (no control characters, no bidirectional overrides: "
                    + "`key list` prints it as given)")
        }
        if let expiresInDays, !(1...3650).contains(expiresInDays) {
            throw ValidationError("--expires-in-days must be 1 to 3650")
        }
    }

    /// Not a C0 or C1 control character, DEL, or a bidirectional formatting character (which would reorder what
    /// `key list` prints around the name).
    static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: false
        default: true
        }
    }

    func run() async throws {
        let store = try await OperatorStore.open(config: config)
        let key = APIKey.generate()
        let now = Date()
        let stored = StoredAPIKey(
            key: key, appID: appID, label: name, createdAt: now,
            expiresAt: expiresInDays.map { now.addingTimeInterval(TimeInterval($0) * 86_400) })
        do {
            guard try await store.app(id: appID) != nil else {
                throw OperatorError("no app '\(appID)' in this gateway (see `sealed-push-gateway app list`)")
            }
            try await store.addAPIKey(stored)
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        let description = KeyCommand.Description(stored, now: now, secret: key.text)
        if json {
            print(try AppDescription.json(description))
        } else {
            print("key id: \(stored.id) (app \(appID), name \(name)\(description.expiresAt.map { ", expires \($0)" } ?? ""))")
            print("API key (shown once; the gateway keeps only its SHA-256): \(key.text)")
        }
    }
}

/// `sealed-push-gateway key list`: every key of an app (or of all apps), without secrets or digests.
struct KeyListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List API keys: id, app, name, created, last used, expiry (never the key).")

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "Only this app's keys (default: every app's).")
    var appID: String?

    @Flag(help: "Print a JSON array instead.")
    var json = false

    func run() async throws {
        let store = try await OperatorStore.open(config: config)
        let keys: [StoredAPIKey]
        do { keys = try await store.apiKeys(appID: appID) } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        let now = Date()
        let descriptions = keys.map { KeyCommand.Description($0, now: now) }
        if json {
            print(try AppDescription.json(descriptions))
        } else {
            for description in descriptions { print(description.line) }
        }
    }
}

/// `sealed-push-gateway key revoke`: removes a key; requests with it get `401` at once, on every node.
struct KeyRevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revoke an API key by its id: every request with it is refused (401) from now on.")

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(help: "The key's id (`key list`; the part of the key before its secret).")
    var id: String

    func run() async throws {
        let store = try await OperatorStore.open(config: config)
        let removed: Bool
        do { removed = try await store.removeAPIKey(id: id) } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        guard removed else { throw OperatorError("no API key '\(id)' in this gateway (see `sealed-push-gateway key list`)") }
        print("revoked: \(id)")
    }
}
