import Foundation
import MetricsTestKit
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// The webhook's delivery policy against real HTTP/1.1 receivers on loopback: redirects, credentials in the URL,
/// concurrency, shutdown, metrics, trust roots, and the signature checked by the spec's own Python verifier.
@Suite("Webhook delivery policy", .serialized)
struct UnregisteredWebhookPolicyTests {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)

    static func event(_ device: String) -> UnregisteredDeviceEvent {
        UnregisteredDeviceEvent(
            appID: "alpha", deviceID: device, reason: "Unregistered", unregisteredAt: Date(timeIntervalSince1970: 1_800_000_000))
    }

    static func configuration(_ url: String, attempts: Int = 3) throws -> UnregisteredWebhookConfiguration {
        var configuration = try UnregisteredWebhookConfiguration(url: URL(string: url)!, secret: secret)
        configuration.maxAttempts = attempts
        configuration.initialBackoff = .milliseconds(20)
        configuration.requestTimeout = .seconds(5)
        return configuration
    }

    /// A `307` to another port is a failed attempt, final for the event (a redirect does not change on retry): the
    /// redirect target gets nothing, the event is given up at once with the status in an error line.
    @Test func redirectIsNeverFollowed() async throws {
        let target = try await WebhookReceiver.start(answers: [])
        let receiver = try await WebhookReceiver.start(
            answers: [307, 307, 307], location: "http://127.0.0.1:\(target.port)/internal-admin?x=1")
        let logs = CapturedLogs()
        let webhook = try UnregisteredWebhook(
            configuration: Self.configuration("http://127.0.0.1:\(receiver.port)/hook"), logger: logs.logger())
        let delivered = await webhook.deliver(Self.event("device-r"))
        let (first, second) = (receiver.requests, target.requests)
        await receiver.stop()
        await target.stop()
        #expect(!delivered)
        #expect(first.count == 1)
        #expect(second.isEmpty)
        let errors = logs.lines.filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.text.contains("307") == true)
        #expect(errors.first?.text.contains("device-r") == true)
    }

    /// A user, password and query token in the URL never reach a log line or the configuration's description: the
    /// URL shows as `scheme://host:port/path?…`.
    @Test func credentialsInTheURLAreNeverLogged() async throws {
        let closed = try await WebhookReceiver.start(answers: [])
        let port = closed.port
        await closed.stop()
        let answering = try await WebhookReceiver.start(answers: [500, 500])
        let logs = CapturedLogs()
        for port in [port, answering.port] {
            let configuration = try Self.configuration(
                "http://hookuser:HookPassw0rd@127.0.0.1:\(port)/hook?token=QS-SECRET-TOKEN", attempts: 2)
            let webhook = try UnregisteredWebhook(configuration: configuration, logger: logs.logger())
            #expect(await !webhook.deliver(Self.event("device-c")))
            for text in [
                configuration.description, String(reflecting: configuration), configuration.redactedURL,
            ] {
                #expect(!text.contains("HookPassw0rd") && !text.contains("hookuser") && !text.contains("QS-SECRET"))
            }
            #expect(configuration.redactedURL == "http://127.0.0.1:\(port)/hook?…")
        }
        await answering.stop()
        #expect(answering.requests.count == 2)
        #expect(logs.lines.count >= 4)
        #expect(!logs.text.contains("HookPassw0rd"))
        #expect(!logs.text.contains("hookuser"))
        #expect(!logs.text.contains("QS-SECRET-TOKEN"))
    }

    /// Four events to a receiver taking one second each are posted concurrently (`maxConcurrent` 4, the default):
    /// they all arrive within a fraction of a second, not one second apart.
    @Test func postsConcurrently() async throws {
        let receiver = try await WebhookReceiver.start(answers: [], delay: .seconds(1))
        let webhook = try UnregisteredWebhook(
            configuration: Self.configuration("http://127.0.0.1:\(receiver.port)/hook"),
            logger: DeliveryFixture.quietLogger("webhook"))
        let running = Task { await webhook.run() }
        for index in 1...4 { webhook.notify(Self.event("device-\(index)")) }
        webhook.finish()
        await running.value
        let requests = receiver.requests
        await receiver.stop()
        #expect(requests.count == 4)
        let times = requests.map(\.receivedAt)
        if let first = times.min(), let last = times.max() {
            #expect(first.duration(to: last) < .milliseconds(700))
        }
    }

    /// A receiver that answers after 3 s, with a 300 ms `requestTimeout`: the attempt ends at its deadline (the
    /// connection closed), logged as "no answer … within", and the event is given up after its one attempt.
    @Test func anAttemptEndsAtItsDeadline() async throws {
        let receiver = try await WebhookReceiver.start(answers: [], delay: .seconds(3))
        var configuration = try Self.configuration("http://127.0.0.1:\(receiver.port)/hook", attempts: 1)
        configuration.requestTimeout = .milliseconds(300)
        let logs = CapturedLogs()
        let webhook = try UnregisteredWebhook(configuration: configuration, logger: logs.logger())
        let start = ContinuousClock.now
        let delivered = await webhook.deliver(Self.event("device-t"))
        let took = start.duration(to: .now)
        await receiver.stop()
        #expect(!delivered)
        #expect(took >= .milliseconds(250) && took < .seconds(2), "the attempt took \(took)")
        let errors = logs.lines.filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.text.contains("no answer from") == true, "\(errors.first?.text ?? "")")
    }

    /// Stopped before its queue drained (the drain deadline passed), the webhook logs every event it did not
    /// deliver at `error`, naming it, and how many were dropped.
    @Test func shutdownLogsEveryUndeliveredEvent() async throws {
        let receiver = try await WebhookReceiver.start(answers: [], delay: .seconds(3))
        var configuration = try Self.configuration("http://127.0.0.1:\(receiver.port)/hook")
        configuration.requestTimeout = .seconds(10)
        let logs = CapturedLogs()
        let webhook = try UnregisteredWebhook(configuration: configuration, logger: logs.logger())
        let running = Task { await webhook.run() }
        for index in 1...6 { webhook.notify(Self.event("device-\(index)")) }
        try await Task.sleep(for: .milliseconds(300))
        webhook.finish()
        try await Task.sleep(for: .milliseconds(200))
        running.cancel()  // the drain deadline passed
        await running.value
        await receiver.stop()
        let errors = logs.lines.filter { $0.level == .error }
        for index in 1...6 {
            #expect(errors.contains { $0.text.contains("device-\(index)") }, "device-\(index) not logged")
        }
        #expect(errors.contains { $0.text.contains("dropped") && $0.text.contains("6") })
    }

    /// Every ending is counted: delivered, failed (attempts spent; a redirect), dropped (the queue full); and every
    /// attempt by result.
    @Test func outcomesAreCounted() async throws {
        let metrics = TestMetrics()
        let logs = CapturedLogs()
        // One event per webhook, one after the other: 500 then 200 (delivered), 500 twice (failed), 302 (failed at
        // once), then a queue of one: the second event dropped, the first delivered.
        let receiver = try await WebhookReceiver.start(answers: [500, 200, 500, 500, 302, 200])
        for (devices, limit) in [(["device-1"], 10), (["device-2"], 10), (["device-3"], 10), (["device-4", "device-5"], 1)] {
            var configuration = try Self.configuration("http://127.0.0.1:\(receiver.port)/hook", attempts: 2)
            configuration.queueLimit = limit
            let webhook = try UnregisteredWebhook(
                configuration: configuration, logger: logs.logger(), metricsFactory: metrics)
            for device in devices { webhook.notify(Self.event(device)) }
            webhook.finish()
            await webhook.run()
        }
        await receiver.stop()
        func events(_ outcome: String) throws -> Int64 {
            try metrics.expectCounter(
                "sealedpush_gateway_webhook_events_total", [("event", "device.unregistered"), ("outcome", outcome)]
            ).totalValue
        }
        func attempts(_ result: String) throws -> Int64 {
            try metrics.expectCounter(
                "sealedpush_gateway_webhook_attempts_total", [("event", "device.unregistered"), ("result", result)]
            ).totalValue
        }
        #expect(try events("delivered") == 2)
        #expect(try events("failed") == 2)
        #expect(try events("dropped") == 1)
        #expect(try attempts("2xx") == 2)
        #expect(try attempts("5xx") == 3)
        #expect(try attempts("3xx") == 1)
        let errors = logs.lines.filter { $0.level == .error }
        #expect(errors.count == 3)
        #expect(errors.contains { $0.text.contains("device-2") && $0.text.contains("HTTP 500") })
        #expect(errors.contains { $0.text.contains("device-3") && $0.text.contains("HTTP 302") })
        #expect(errors.contains { $0.text.contains("device-5") && $0.text.contains("queue is full") })
        #expect(errors.allSatisfy { $0.metadata["event"] == "device.unregistered" && $0.metadata["app"] == "alpha" })
    }

    /// The default policy: 8 attempts, the last one 5 to 10 minutes after the first, up to 4 posts at once.
    @Test func defaultPolicyIsBoundedAndLong() throws {
        let configuration = try UnregisteredWebhookConfiguration(url: URL(string: "https://h.example/")!, secret: Self.secret)
        #expect(configuration.maxAttempts == 8)
        #expect(configuration.maxConcurrent == 4)
        #expect(configuration.queueLimit == 10_000)
        let schedule = { (random: Double) in
            (1..<configuration.maxAttempts).reduce(Duration.zero) { $0 + configuration.backoff(afterFailures: $1, random: random) }
        }
        #expect(schedule(0) >= .seconds(300) && schedule(1) <= .seconds(630))
    }

    /// An `https` receiver whose certificate only `trustRootsPEM` vouches for: refused with the system's roots,
    /// delivered with its trust roots.
    @Test func trustRootsReplaceTheSystems() async throws {
        let certificate = try EmulatorCertificate.generate()
        let receiver = try await WebhookReceiver.start(
            answers: [], tls: (certificate.certificatePEM, certificate.privateKeyPEM))
        var configuration = try Self.configuration("https://127.0.0.1:\(receiver.port)/hook", attempts: 1)
        let quiet = DeliveryFixture.quietLogger("webhook")
        #expect(await !(try UnregisteredWebhook(configuration: configuration, logger: quiet).deliver(Self.event("d"))))
        configuration.trustRootsPEM = certificate.certificatePEM
        #expect(await (try UnregisteredWebhook(configuration: configuration, logger: quiet).deliver(Self.event("d"))))
        await receiver.stop()
        #expect(receiver.requests.count == 1)
        configuration.trustRootsPEM = "no certificate here\n"
        #expect(throws: SealedPushError.self) { try UnregisteredWebhook(configuration: configuration, logger: quiet) }
    }

    /// A real signed event, captured by the receiver, checks with `Specs/tools/verify_webhook_signature.py` (written
    /// from the spec's text, stdlib only) keyed with a secret file ending in a newline; a changed body does not.
    @Test func specVerifierAcceptsARealEvent() async throws {
        let receiver = try await WebhookReceiver.start(answers: [])
        let webhook = try UnregisteredWebhook(
            configuration: Self.configuration("http://127.0.0.1:\(receiver.port)/hook"),
            logger: DeliveryFixture.quietLogger("webhook"))
        #expect(await webhook.deliver(Self.event("device-v")))
        await receiver.stop()
        let request = try #require(receiver.requests.first)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-webhook-verify-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(Self.secret + [0x0A]).write(to: directory.appendingPathComponent("secret"))
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name] = value }
        try JSONSerialization.data(withJSONObject: headers).write(to: directory.appendingPathComponent("headers.json"))
        try Data(request.body).write(to: directory.appendingPathComponent("body"))
        try Data(request.body + [0x20]).write(to: directory.appendingPathComponent("changed"))
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Specs/tools/verify_webhook_signature.py").path
        func run(_ body: String) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", script, directory.appendingPathComponent("secret").path,
                directory.appendingPathComponent("headers.json").path, directory.appendingPathComponent(body).path,
            ]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: output, as: UTF8.self))
        }
        let (status, output) = try run("body")
        #expect(status == 0, "\(output)")
        #expect(output.hasPrefix("OK device.unregistered "))
        let (changedStatus, changedOutput) = try run("changed")
        #expect(changedStatus == 1 && changedOutput.contains("signature mismatch"))
    }
}
