import ArgumentParser
import Foundation
import Logging
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushServer

/// `sealed-push-gateway check`: everything `serve` would need, checked without serving or changing anything — for a
/// deploy pipeline before it restarts the gateway, or an operator after editing the configuration.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a gateway's configuration, certificate, files, database and apps' keys without serving or changing anything.",
        discussion: """
            Each line is ok, warn or FAIL with what was checked. Exit status 0 when nothing failed, 1 otherwise. \
            The database is not created or migrated: a schema older than this gateway's is a warning (serve migrates \
            it), a newer one a failure. A key file others can read is a warning (chmod 600). With delivery.proxy, the \
            proxy is asked for a tunnel to APNs and to FCM, each closed once open (nothing is sent through it).
            """)

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Flag(help: "Print a JSON array of {check, status, detail} instead.")
    var json = false

    /// One line of the report.
    struct Finding: Encodable {
        var check: String
        var status: String
        var detail: String
    }

    func run() async throws {
        var findings: [Finding] = []
        func record(_ check: String, _ status: String, _ detail: String) {
            findings.append(Finding(check: check, status: status, detail: detail))
        }
        func attempt(_ check: String, _ body: () async throws -> (String, String)) async {
            do {
                let (status, detail) = try await body()
                record(check, status, detail)
            } catch {
                record(check, "FAIL", Self.message(error))
            }
        }

        var loaded: GatewayConfiguration?
        await attempt("configuration") {
            loaded = try GatewayConfiguration.load(path: config, environment: ProcessInfo.processInfo.environment)
            return ("ok", config)
        }
        if let configuration = loaded {
            await Self.checkServing(configuration, attempt)
            await Self.checkStoreAndApps(configuration, attempt)
        }
        if json {
            print(try AppDescription.json(findings))
        } else {
            let width = findings.map(\.check.count).max() ?? 0
            for finding in findings {
                print("\(finding.status.padding(toLength: 5, withPad: " ", startingAt: 0)) "
                    + "\(finding.check.padding(toLength: width, withPad: " ", startingAt: 0))  \(finding.detail)")
            }
        }
        if findings.contains(where: { $0.status == "FAIL" }) { throw ExitCode.failure }
    }

    typealias Attempt = (String, () async throws -> (String, String)) async -> Void

    /// Days left under which the certificate is a warning here: earlier than serve's own warning
    /// (``GatewayTLSContext/expiryWarningDays``), so a deploy pipeline hears of it first.
    static let expiryWarningDays = 21

    /// The listener's certificate, delivery's files and the blob store.
    static func checkServing(_ configuration: GatewayConfiguration, _ attempt: Attempt) async {
        if let settings = configuration.tls {
            await attempt("tls") {
                // The same load and judgement as serve's (expired or not yet valid: FAIL, naming the file and dates).
                let now = Date()
                let summary = try GatewayTLSContext(settings: settings, clock: { now }).summary
                let days = summary.daysLeft(at: now)
                return (days < expiryWarningDays ? "warn" : "ok", "\(summary) (\(days) days left)")
            }
        }
        var checked: DeliveryConfiguration?
        await attempt("delivery") {
            guard let delivery = try configuration.deliveryConfiguration() else {
                return ("ok", "off on this node (jobs stay queued for nodes that deliver)")
            }
            checked = delivery
            return ("ok", "node \(delivery.nodeID), \(delivery.maxConcurrentSends) sends at a time"
                + (delivery.webhook.map { ", webhook \($0.redactedURL)" } ?? ""))
        }
        if let delivery = checked, let proxy = delivery.proxy {
            await attempt("proxy") {
                var targets: [String] = []
                for (host, port) in [
                    (delivery.productionEndpoint.host, delivery.productionEndpoint.port),
                    (delivery.fcmEndpoint.host, delivery.fcmEndpoint.port),
                ] {
                    try await ProxyProbe.tunnel(through: proxy, to: host, port: port, timeout: .seconds(5))
                    targets.append(ProviderProxy.authority(host: host, port: port))
                }
                return ("ok", "\(proxy) opens tunnels to \(targets.joined(separator: " and "))")
            }
        }
        if configuration.overflow != nil {
            await attempt("blobs") {
                guard let overflow = try configuration.overflowConfiguration() else { return ("ok", "none") }
                return ("ok", "\(configuration.overflow?.blobDirectory ?? ""), served as \(overflow.urlPrefix)")
            }
        }
    }

    /// The database (reached, its schema) and every app's key files.
    static func checkStoreAndApps(_ configuration: GatewayConfiguration, _ attempt: Attempt) async {
        let store: any GatewayStore
        do {
            store = try configuration.openStore(logger: Logger(label: "sealed-push.gateway.db"))
        } catch {
            await attempt("database") { throw error }
            return
        }
        var apps: [GatewayApp] = []
        await attempt("database") {
            let latest: Int
            if let postgres = store as? PostgresGatewayStore {
                try await postgres.checkConnection()
                latest = PostgresGatewayStore.latestSchemaVersion
            } else {
                latest = SQLiteGatewayStore.latestSchemaVersion
            }
            let version = try await store.schemaVersion()
            apps = version == 0 ? [] : try await store.apps()
            let depth = version == 0 ? nil : try await store.queueDepth()
            let queue = depth.map { ", \($0.queued) jobs queued, \($0.claimed) claimed" } ?? ""
            if version > latest {
                return ("FAIL", "schema version \(version) is newer than this gateway's \(latest): run the newer gateway")
            }
            if version < latest {
                return ("warn", "schema version \(version) of \(latest): serve applies \(latest - version) migration(s)\(queue)")
            }
            return ("ok", "schema version \(version)\(queue), \(apps.count) app(s)")
        }
        for app in apps {
            await attempt("app \(app.id)") { try checkApp(app) }
        }
        try? await store.close()
    }

    /// An app's APNs key, server identities and FCM service account: each readable and well formed (else FAIL), and
    /// readable by its owner only (else warn: `serve` uses it, but any local user could copy it).
    static func checkApp(_ app: GatewayApp) throws -> (String, String) {
        var parts: [String] = []
        var exposed: [String] = []  // warnings
        if app.apnsKeyPath.isEmpty {
            exposed.append("no APNs key yet: its iOS devices cannot be reached (`sealed-push-gateway app set-apns`)")
        } else {
            _ = try APNsSigningKey(contentsOfFile: app.apnsKeyPath)
            exposed += try exposure(app.apnsKeyPath, "APNs key")
            parts.append("APNs key \(app.apnsKeyID) (team \(app.teamID))")
        }
        let identity = try ServerIdentity(contentsOfFile: app.serverIdentityPath)
        exposed += try exposure(app.serverIdentityPath, "server identity")
        parts.append("seals with \(identity.keyID.hex)")
        for path in app.previousIdentityPaths {
            _ = try ServerIdentity(contentsOfFile: path)
            exposed += try exposure(path, "previous server identity")
        }
        if !app.previousIdentityPaths.isEmpty { parts.append("\(app.previousIdentityPaths.count) previous identity(ies)") }
        if let fcm = app.fcm {
            _ = try FCMServiceAccount(contentsOfFile: fcm.serviceAccountPath)
            exposed += try exposure(fcm.serviceAccountPath, "FCM service account")
            parts.append("FCM project \(fcm.projectID)")
        }
        guard exposed.isEmpty else { return ("warn", exposed.joined(separator: "; ")) }
        return ("ok", parts.joined(separator: ", "))
    }

    /// What is wrong with a key file's mode: nothing when only its owner can read and write it.
    static func exposure(_ path: String, _ what: String) throws -> [String] {
        // The mode of the file itself: a symbolic link's own mode (always 777) says nothing about who can read it.
        let attributes = try FileManager.default.attributesOfItem(
            atPath: URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        guard mode & 0o077 == 0 else {
            return ["the \(what) \(path) is mode \(String(mode, radix: 8)): others can read it (chmod 600)"]
        }
        return []
    }

    /// An error's message without its type's name.
    static func message(_ error: any Error) -> String {
        switch error {
        case let error as GatewayConfigurationError: error.message
        case let error as GatewayStoreError: error.message
        case let error as SealedPushError: error.message
        case let error as CocoaError where error.code == .fileReadNoSuchFile || error.code == .fileNoSuchFile:
            "no such file: \(error.filePath ?? "")"
        default: "\(error)"
        }
    }
}
