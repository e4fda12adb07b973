import ArgumentParser
import Foundation
import SealedPushGateway

/// `sealed-push-gateway app set-apns`: an app's APNs signing key (a new key from Apple, a revoked one replaced),
/// taken by running nodes without a restart.
struct AppSetAPNsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-apns",
        abstract: "Set an app's APNs key: .p8 file (0600), key id and team id; running nodes switch without a restart.",
        discussion: """
            The file is referenced, not copied: it must stay where it is. It is read and checked now. Running \
            nodes read the app again within delivery.appRefreshSeconds (default 30) and make new APNs connections \
            with the new key when its file, key id or team differ; sends already under way finish on the old ones.
            """)

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "The app's id in the gateway.")
    var appID = "default"

    @Option(name: .customLong("apns-key"), help: "Path of the APNs .p8 key file (mode 0600).")
    var apnsKey: String

    @Option(name: .customLong("key-id"), help: "The key's 10-character id (Apple's developer account shows it).")
    var keyID: String

    @Option(name: .customLong("team-id"), help: "The 10-character developer team id.")
    var teamID: String

    @Option(help: "A new APNs topic (bundle id) as well; default: unchanged.")
    var topic: String?

    func run() async throws {
        let reference = try APNsKeyReference(path: apnsKey, keyID: keyID, teamID: teamID)
        if let topic, topic.isEmpty || topic.utf8.count > 255 { throw OperatorError("--topic must be 1-255 bytes") }
        let app = try await OperatorStore.with(config: config) { store in
            var app = try await OperatorStore.app(appID, in: store)
            app.apnsKeyPath = reference.path
            app.apnsKeyID = reference.keyID
            app.teamID = reference.teamID
            if let topic { app.topic = topic }
            try await store.putApp(app, now: Date())
            return app
        }
        print(
            "app \(app.id): APNs key \(app.apnsKeyID) (team \(app.teamID)) from \(app.apnsKeyPath), topic \(app.topic); "
                + "running nodes use it within delivery.appRefreshSeconds")
    }
}
