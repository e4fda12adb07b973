import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushGateway

/// `sealed-push-gateway webhook`: the webhook events the gateway gave up on — their attempts spent (a receiver down for
/// longer than the retries last) or refused by the receiver — which the outbox keeps until they are sent again or the
/// retention purge deletes them. `list` shows them; `redeliver` sends them again once the receiver is fixed.
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook",
        abstract: "List the webhook events given up, or send them again.",
        subcommands: [WebhookListCommand.self, WebhookRedeliverCommand.self])

    /// One given-up event as `list` prints it (ids and why, never a body).
    struct Description: Encodable {
        var id: Int64
        var type: String
        var appId: String
        var deviceId: String
        var deliveryId: String
        var attempts: Int
        var createdAt: String
        var givenUpAt: String
        var failure: String

        init(_ event: GivenUpWebhookEvent) {
            id = event.id
            type = event.eventType
            appId = event.appID
            deviceId = event.deviceID
            deliveryId = event.deliveryID
            attempts = event.attempts
            createdAt = DeviceRegistration.formatDate(event.createdAt)
            givenUpAt = DeviceRegistration.formatDate(event.givenUpAt)
            failure = event.failure
        }

        var line: String {
            "\(id)  \(type)  app \(appId)  device \(deviceId)  attempts \(attempts)  given up \(givenUpAt)  "
                + "failure \(failure)  delivery \(deliveryId)"
        }
    }
}

/// `sealed-push-gateway webhook list`: the given-up events, oldest first.
struct WebhookListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List webhook events given up: id, type, app, device, attempts, when and why (never an event's body).")

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("app-id"), help: "Only this app's events (default: every app's).")
    var appID: String?

    @Option(help: "The most events listed (1 to 10000).")
    var limit = 1_000

    @Flag(help: "Print a JSON array instead.")
    var json = false

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be 1 to 10000") }
    }

    func run() async throws {
        let events = try await OperatorStore.with(config: config) { store in
            try await store.givenUpWebhookEvents(appID: appID, limit: limit)
        }
        let descriptions = events.map(WebhookCommand.Description.init)
        if json {
            print(try AppDescription.json(descriptions))
        } else {
            for description in descriptions { print(description.line) }
        }
    }
}

/// `sealed-push-gateway webhook redeliver`: sends given-up events again — every one (`--all`) or those named — with
/// their delivery ids and no attempts counted; the gateway's running nodes post them within a second.
struct WebhookRedeliverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redeliver",
        abstract: "Send given-up webhook events again (after the receiver is fixed): all of them, or those named by id.")

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(name: .customLong("id"), help: "An event's id (`webhook list`); repeat for more.")
    var ids: [Int64] = []

    @Flag(help: "Every given-up event (of --app-id when given).")
    var all = false

    @Option(name: .customLong("app-id"), help: "Only this app's events.")
    var appID: String?

    @Flag(help: "Print a JSON object instead.")
    var json = false

    func validate() throws {
        guard all != !ids.isEmpty else {
            throw ValidationError("name the events to send again with --id (see `webhook list`), or pass --all; not both")
        }
    }

    func run() async throws {
        let count = try await OperatorStore.with(config: config) { store in
            try await store.redeliverWebhookEvents(appID: appID, ids: all ? nil : ids)
        }
        if json {
            print(try AppDescription.json(["redelivered": count]))
        } else {
            print("sent again: \(count) event\(count == 1 ? "" : "s") (running gateway nodes with a webhook post them within a second)")
        }
        if !all, count < Set(ids).count {
            throw OperatorError(
                "\(Set(ids).count - count) of the ids named are not given-up events\(appID.map { " of app \($0)" } ?? "") "
                    + "(see `sealed-push-gateway webhook list`)")
        }
    }
}
