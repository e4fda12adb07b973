import ArgumentParser
import Foundation
import SealedPushGateway

/// `sealed-push-gateway app remove`: an app and everything the gateway holds for it, in one transaction.
struct AppRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove an app with its API keys, devices, notifications and queued jobs (files it references stay).",
        discussion: """
            Nothing queued for the app is delivered afterwards, and its API keys are refused at once on every node. \
            The .p8 key, the server identity and the FCM service-account file are left where they are. Asks for \
            --yes.
            """)

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "The app to remove.")
    var appID: String

    @Flag(help: "Confirm: remove the app and everything of it.")
    var yes = false

    @Flag(help: "Print a JSON object of what was removed instead.")
    var json = false

    func run() async throws {
        guard yes else {
            throw OperatorError(
                "removing app '\(appID)' deletes its API keys, devices, notifications and queued jobs: run again with --yes")
        }
        guard let removal = try await OperatorStore.with(config: config, { try await $0.removeApp(id: appID) }) else {
            throw OperatorError("no app '\(appID)' in this gateway (see `sealed-push-gateway app list`)")
        }
        if json {
            struct Removed: Encodable {
                let appId: String
                let devices: Int
                let apiKeys: Int
                let notifications: Int
                let undeliveredJobs: Int
            }
            print(
                try AppDescription.json(
                    Removed(
                        appId: removal.appID, devices: removal.devices, apiKeys: removal.apiKeys,
                        notifications: removal.notifications, undeliveredJobs: removal.openJobs)))
        } else {
            print(
                "removed app \(removal.appID): \(removal.apiKeys) API keys, \(removal.devices) devices, "
                    + "\(removal.notifications) notifications (\(removal.openJobs) jobs not delivered)")
        }
    }
}
