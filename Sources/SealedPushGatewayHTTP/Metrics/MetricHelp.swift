import Foundation
import SealedPushGateway

/// The `# HELP` text of every metric family the gateway exposes, put before each family's `# TYPE` line when
/// `/metrics` is rendered (the Prometheus factory of swift-metrics registers every family without help text, and the
/// registry refuses two help texts for one family, so the text is added to the exposition rather than registered).
enum MetricHelp {
    /// Help text by family name.
    static let texts: [String: String] = [
        GatewayMetrics.Name.accepted: "Notifications accepted (committed, answered 202), replays not counted.",
        GatewayMetrics.Name.sealed: "Bodies sealed: one per device of an accepted notification.",
        GatewayMetrics.Name.sent: "Jobs the provider (APNs or FCM) accepted, by platform.",
        GatewayMetrics.Name.failed:
            "Jobs that ended without being sent, by platform and reason (the provider's, or Expired, or the last "
            + "transient reason when attempts ran out).",
        GatewayMetrics.Name.retries:
            "Provider requests that failed transiently, by platform and reason; each is followed by another attempt "
            + "unless attempts ran out.",
        GatewayMetrics.Name.providerRequests: "Requests made to a provider, the clients' own retries included.",
        GatewayMetrics.Name.requeued: "Jobs put back in the queue for a later attempt, by platform.",
        GatewayMetrics.Name.queueDepth: "Jobs queued or claimed, read from the store at this scrape.",
        GatewayMetrics.Name.webhookOutbox:
            "Webhook events in the store's outbox (waiting, or being posted by a node), read at this scrape.",
        GatewayMetrics.Name.webhookGivenUp:
            "Webhook events given up and kept for `sealed-push-gateway webhook redeliver`, read at this scrape.",
        GatewayMetrics.Name.sealSeconds: "Time to seal one body, in seconds.",
        GatewayMetrics.Name.sendSeconds: "Time of one send through a provider's client, its retries included, in seconds.",
        GatewayMetrics.Name.httpRequests:
            "API answers by route pattern (NotFound for no route), method and status, refused requests included.",
        GatewayMetrics.Name.httpRequestSeconds: "API time from a request's head to its answer, by route and method.",
        GatewayMetrics.Name.deliverySeconds:
            "From a notification's acceptance to the provider accepting a job of it, in seconds, by platform.",
        GatewayMetrics.Name.attachmentBytes: "Attachment plaintext bytes encrypted into the blob store.",
        GatewayMetrics.Name.rateLimited: "Requests refused 429 by an app's rate limit, by app and limit.",
        GatewayMetrics.Name.receipts:
            "Sealed receipts recorded, by outcome and reason (a fallback's reason code, other, or none).",
        GatewayMetrics.Name.receiptsRefused: "Receipts refused, by cause.",
        GatewayMetrics.Name.withdrawn: "Notifications withdrawn, and the jobs their withdrawal ended.",
        GatewayMetrics.Name.buildInfo: "Always 1; the version label names the SealedPush release this node runs.",
        "sealedpush_gateway_jobs_started_total":
            "Jobs the node started sending, by platform and path (claim: from the queue; handover: at enqueue).",
        "sealedpush_gateway_webhook_events_total":
            "Webhook events that ended, by event and outcome (delivered, failed, dropped).",
        "sealedpush_gateway_webhook_attempts_total": "Webhook POSTs made, by event and result (2xx, 3xx, 4xx, 5xx, error).",
        "sealedpush_gateway_webhook_queue_events": "Webhook events held in memory: waiting, waiting to retry, or being posted.",
        GroupCommitMetrics.batchSizeLabel: "Items written by one group commit of the store, by write.",
        GroupCommitMetrics.writeSecondsLabel: "Time of one group commit of the store, in seconds, by write.",
    ]

    /// `exposition` with a `# HELP` line before each family's `# TYPE` line that has none; a family without text
    /// here gets a generic one, so every family has its line.
    /// - Parameter exposition: Prometheus text format 0.0.4, as the registry renders it.
    /// - Returns: The same text with the help lines.
    static func adding(to exposition: [UInt8]) -> [UInt8] {
        let typePrefix = Array("# TYPE ".utf8)
        let helpPrefix = Array("# HELP ".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(exposition.count + texts.count * 96)
        var lineStart = 0
        var previousWasHelp = false
        while lineStart < exposition.count {
            var lineEnd = lineStart
            while lineEnd < exposition.count, exposition[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            let line = exposition[lineStart..<lineEnd]
            if !previousWasHelp, line.starts(with: typePrefix) {
                let rest = line.dropFirst(typePrefix.count)
                let name = String(decoding: rest.prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
                output += helpPrefix
                output += Array(name.utf8)
                output.append(UInt8(ascii: " "))
                output += Array(escaped(texts[name] ?? "A SealedPush gateway metric (see the README's metrics list).").utf8)
                output.append(UInt8(ascii: "\n"))
            }
            previousWasHelp = line.starts(with: helpPrefix)
            output += line
            if lineEnd < exposition.count { output.append(UInt8(ascii: "\n")) }
            lineStart = lineEnd + 1
        }
        return output
    }

    /// Help text escaped as the text format requires (`\` and line feeds).
    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
