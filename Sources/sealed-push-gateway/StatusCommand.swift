import ArgumentParser
import Foundation
import SealedPushGateway
import SealedPushGatewayHTTP

/// `sealed-push-gateway status`: what the gateway's processes are doing, read from the shared database — each
/// node's process and heartbeat, the leases it holds, each app's open jobs with how long the oldest has waited, and the
/// webhook's outbox (events to post, events given up).
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "Show the gateway's nodes (live or stale, their leases), each app's queued and claimed jobs, and the webhook's outbox.",
        discussion: """
            A node is live while its heartbeat is younger than delivery.nodeStaleSeconds; a stale one's leases are \
            taken over as they expire (or at once when it starts again). An app's "waiting" is how long its oldest \
            queued job has been due: growing, delivery is behind. Webhook events "given up" are kept for \
            `sealed-push-gateway webhook list` and `webhook redeliver`.
            """)

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Flag(help: "Print JSON instead.")
    var json = false

    struct Node: Encodable {
        var nodeId: String
        var live: Bool
        var host: String
        var pid: Int
        var bootId: String
        var startedAt: String
        var heartbeatSecondsAgo: Double
        var leasedJobs: Int
    }

    struct App: Encodable {
        var appId: String
        var queued: Int
        var claimed: Int
        var oldestQueuedWaitingSeconds: Double?
    }

    struct Status: Encodable {
        var nodes: [Node]
        var apps: [App]
        var webhook: WebhookOutboxDepth
    }

    func run() async throws {
        let loaded: GatewayConfiguration
        do {
            loaded = try GatewayConfiguration.load(path: config, environment: ProcessInfo.processInfo.environment)
        } catch let error as GatewayConfigurationError {
            throw OperatorError(error.message)
        }
        let (nodes, summary, outbox) = try await OperatorStore.with(config: config) { store in
            (try await store.nodes(), try await store.queueSummary(), try await store.webhookOutboxDepth())
        }
        let now = Date()
        let stale = loaded.delivery.nodeStaleSeconds
        let status = Status(
            nodes: nodes.map { node in
                let age = now.timeIntervalSince(node.heartbeatAt)
                return Node(
                    nodeId: node.nodeID, live: age < stale && !node.isProvablyGone, host: node.host, pid: node.pid,
                    bootId: node.bootID, startedAt: ISO8601DateFormatter().string(from: node.startedAt),
                    heartbeatSecondsAgo: (age * 10).rounded() / 10, leasedJobs: summary.leases[node.leaseOwner] ?? 0)
            },
            apps: summary.apps.map { app in
                App(
                    appId: app.appID, queued: app.queued, claimed: app.claimed,
                    oldestQueuedWaitingSeconds: app.oldestQueuedDue.map { (max(0, now.timeIntervalSince($0)) * 10).rounded() / 10 })
            },
            webhook: outbox)
        if json {
            print(try AppDescription.json(status))
            return
        }
        print(status.nodes.isEmpty ? "nodes: none (no serve with delivery on is running)" : "nodes:")
        for node in status.nodes {
            print(
                "  \(node.nodeId)  \(node.live ? "live " : "stale")  pid \(node.pid) on \(node.host), started \(node.startedAt), "
                    + "heartbeat \(Self.duration(node.heartbeatSecondsAgo)) ago, \(node.leasedJobs) jobs leased")
        }
        print(status.apps.isEmpty ? "jobs: none queued or claimed" : "jobs:")
        for app in status.apps {
            let waiting = app.oldestQueuedWaitingSeconds.map { ", oldest waiting \(Self.duration($0))" } ?? ""
            print("  \(app.appId)  \(app.queued) queued\(waiting), \(app.claimed) claimed")
        }
        if outbox == WebhookOutboxDepth(waiting: 0, givenUp: 0) {
            print("webhook events: none waiting or given up")
        } else {
            print(
                "webhook events: \(outbox.waiting) waiting, \(outbox.givenUp) given up"
                    + (outbox.givenUp > 0 ? " (`sealed-push-gateway webhook list`, then `webhook redeliver`)" : ""))
        }
    }

    /// `0.8 s`, `42 s`, `3 min`, `2 h`.
    static func duration(_ seconds: Double) -> String {
        switch seconds {
        case ..<10: String(format: "%.1f s", seconds)
        case ..<120: "\(Int(seconds)) s"
        case ..<7_200: "\(Int(seconds / 60)) min"
        default: "\(Int(seconds / 3_600)) h"
        }
    }
}
