import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// `sealed-push-gateway identity`: an app's server identities — the one that seals, and those rotated out that
/// still open receipts until the operator retires them.
///
/// Rotation without a flag day: `rotate` makes a new identity that seals every send from then on; apps in the field
/// pin both public keys (the client takes a list of pinned server keys), so they open both old and new envelopes,
/// and their receipts, sealed to whichever identity sealed the notification, still open. Once the apps that pin
/// only the old key are gone, `retire --apps-pin-new` drops it.
struct IdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "List, rotate or retire an app's server identities (the keys apps pin).",
        subcommands: [IdentityListCommand.self, IdentityRotateCommand.self, IdentityRetireCommand.self])

    /// The most identities an app keeps (the sealing one and those rotated out): each is tried for receipts.
    static let maximumIdentities = 4

    /// One identity as `list` prints it.
    struct Description: Encodable {
        var keyId: String?
        var publicKey: String?
        var path: String
        /// `sealing` (the current one) or `receipts` (rotated out: opens receipts, seals nothing).
        var role: String
        var problem: String?

        init(path: String, sealing: Bool) {
            self.path = path
            role = sealing ? "sealing" : "receipts"
            do {
                let identity = try ServerIdentity(contentsOfFile: path)
                keyId = identity.keyID.hex
                publicKey = identity.publicKeyText
            } catch {
                problem = "cannot read \(path): \(error)"
            }
        }

        static func all(of app: GatewayApp) -> [Description] {
            [Description(path: app.serverIdentityPath, sealing: true)]
                + app.previousIdentityPaths.reversed().map { Description(path: $0, sealing: false) }
        }

        var line: String {
            "\(keyId ?? "?")  \(role == "sealing" ? "sealing " : "receipts")  \(publicKey ?? "(\(problem ?? "unreadable"))")  \(path)"
        }
    }
}

/// `sealed-push-gateway identity list`: an app's identities, the sealing one first (never a private key).
struct IdentityListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Print an app's server identities: key id, role, public key (what apps pin), file.")

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "The app's id in the gateway.")
    var appID = "default"

    @Flag(help: "Print a JSON array instead (for scripts).")
    var json = false

    func run() async throws {
        let app = try await OperatorStore.with(config: config) { try await OperatorStore.app(appID, in: $0) }
        let descriptions = IdentityCommand.Description.all(of: app)
        if json {
            print(try AppDescription.json(descriptions))
        } else {
            for description in descriptions { print(description.line) }
        }
    }
}

/// `sealed-push-gateway identity rotate`: a fresh identity seals from now on; the current one keeps opening receipts.
struct IdentityRotateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Make a new server identity (0600) that seals every send from now on; the old one still opens receipts.",
        discussion: """
            Ship the new public key in the app beside the old one before you rotate: an app that pins only the old \
            key cannot open what the new identity seals (it shows its fallback). Every node seals with the new \
            identity from its next request.
            """)

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "The app's id in the gateway.")
    var appID = "default"

    @Option(help: "An identity made beforehand (`sealed-push keygen --out FILE`, 0600) whose public key the apps already pin; default: a fresh one.")
    var identity: String?

    @Flag(help: "Print the new identity as a JSON object instead.")
    var json = false

    func run() async throws {
        umask(0o077)
        var prepared: (path: String, keyID: KeyID)?
        if let identity {
            let path = URL(fileURLWithPath: identity).standardizedFileURL.path
            try OwnerOnlyFile.require(path, option: "--identity")
            do { prepared = (path, try ServerIdentity(contentsOfFile: path).keyID) } catch let error as SealedPushError {
                throw OperatorError("--identity: \(error.message)")
            }
        }
        let (app, path) = try await OperatorStore.with(config: config) { store in
            var app = try await OperatorStore.app(appID, in: store)
            guard app.previousIdentityPaths.count + 1 < IdentityCommand.maximumIdentities else {
                throw OperatorError(
                    "app '\(appID)' has \(IdentityCommand.maximumIdentities) identities: retire one first "
                        + "(`sealed-push-gateway identity retire`)")
            }
            let path: String
            if let prepared {
                for existing in [app.serverIdentityPath] + app.previousIdentityPaths
                where (try? ServerIdentity(contentsOfFile: existing))?.keyID == prepared.keyID {
                    throw OperatorError("\(prepared.keyID.hex) is already one of app '\(appID)''s identities (\(existing))")
                }
                path = prepared.path
            } else {
                let identity = try ServerIdentity.generate()
                let directory = URL(fileURLWithPath: app.serverIdentityPath).deletingLastPathComponent().path
                path = directory + "/\(appID)-\(identity.keyID.hex).identity"
                try identity.write(toFile: path)  // atomic, 0600, never over an existing file
            }
            app.previousIdentityPaths.append(app.serverIdentityPath)
            app.serverIdentityPath = path
            do { try await store.putApp(app, now: Date()) } catch {
                if prepared == nil { try? FileManager.default.removeItem(atPath: path) }
                throw error
            }
            return (app, path)
        }
        let new = IdentityCommand.Description(path: path, sealing: true)
        if json {
            print(try AppDescription.json(new))
            return
        }
        print("app \(app.id): new server identity \(new.keyId ?? "?") seals from now on: \(path)")
        print("  apps pin: \(new.publicKey ?? "?")")
        print("  previous identities still open receipts until `identity retire`:")
        for description in IdentityCommand.Description.all(of: app).dropFirst() { print("    " + description.line) }
    }
}

/// `sealed-push-gateway identity retire`: an identity rotated out no longer opens receipts.
struct IdentityRetireCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retire",
        abstract: "Retire an identity rotated out: its receipts are refused from now on (the sealing identity cannot be retired).",
        discussion: """
            Only after the apps in use pin the new key: asks for --apps-pin-new as the operator's word. The file is \
            kept; delete it yourself once no node needs it.
            """)

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "The app's id in the gateway.")
    var appID = "default"

    @Option(name: .customLong("key-id"), help: "The identity's key id (16 hex digits, from `identity list`).")
    var keyID: String?

    @Option(
        name: .customLong("path"),
        help: "Instead of --key-id: the identity's file as `identity list` shows it (for a file that can no longer be read).")
    var path: String?

    @Flag(name: .customLong("apps-pin-new"), help: "Confirm that the apps in use pin the sealing identity's key.")
    var appsPinNew = false

    func validate() throws {
        guard (keyID == nil) != (path == nil) else {
            throw ValidationError("name the identity to retire by --key-id or by --path (one of them)")
        }
    }

    func run() async throws {
        let named = keyID ?? path ?? ""
        guard appsPinNew else {
            throw OperatorError(
                "retire only once the apps in use pin the new key: confirm with --apps-pin-new (receipts sealed to "
                    + "\(named) are refused afterwards)")
        }
        let retired = try await OperatorStore.with(config: config) { store in
            var app = try await OperatorStore.app(appID, in: store)
            let index: Int?
            if let keyID {
                if (try? ServerIdentity(contentsOfFile: app.serverIdentityPath))?.keyID.hex == keyID {
                    throw OperatorError(
                        "\(keyID) is app '\(appID)''s sealing identity: rotate first (`sealed-push-gateway identity rotate`)")
                }
                index = app.previousIdentityPaths.firstIndex { (try? ServerIdentity(contentsOfFile: $0))?.keyID.hex == keyID }
            } else {
                // By the path as stored (absolute), or as given relative to the working directory.
                let given = path ?? ""
                let absolute = URL(fileURLWithPath: given).standardizedFileURL.path
                if app.serverIdentityPath == given || app.serverIdentityPath == absolute {
                    throw OperatorError(
                        "\(given) is app '\(appID)''s sealing identity: rotate first (`sealed-push-gateway identity rotate`)")
                }
                index = app.previousIdentityPaths.firstIndex { $0 == given || $0 == absolute }
            }
            guard let index else {
                throw OperatorError(
                    "app '\(appID)' has no previous identity \(named) (see `sealed-push-gateway identity list`; an "
                        + "identity whose file cannot be read is retired by --path)")
            }
            let path = app.previousIdentityPaths.remove(at: index)
            try await store.putApp(app, now: Date())
            return path
        }
        print("app \(appID): identity \(named) retired (its receipts are refused from now on); its file \(retired) is kept")
    }
}
