import Foundation
import SealedPushGatewayTestSupport
import Testing

import SealedPushGateway

/// Which answers the webhook retries and how long it waits, against real HTTP/1.1 receivers on loopback: a refusal
/// (a `4xx` other than 408, 425, 429) is final, a receiver's `Retry-After` (seconds or an HTTP date) sets the next
/// attempt's time, up to `maxBackoff`.
@Suite("Webhook retries", .serialized)
struct WebhookRetryTests {
    static func configuration(_ receiver: WebhookReceiver, attempts: Int = 3) throws -> UnregisteredWebhookConfiguration {
        try UnregisteredWebhookPolicyTests.configuration("http://127.0.0.1:\(receiver.port)/hook", attempts: attempts)
    }

    /// The seconds between a receiver's first two requests.
    static func gap(_ receiver: WebhookReceiver) throws -> Double {
        let requests = receiver.requests
        try #require(requests.count >= 2)
        let gap = requests[1].receivedAt - requests[0].receivedAt
        return Double(gap.components.seconds) + Double(gap.components.attoseconds) / 1e18
    }

    /// An answer the receiver will give again (`400`, `401`, `403`, `404`, `410`, `413`, `422`) fails the event after
    /// one attempt, logged at `error` with the status; the receiver sees one request.
    @Test(arguments: [400, 401, 403, 404, 410, 413, 422])
    func refusalIsNotRetried(status: Int) async throws {
        let receiver = try await WebhookReceiver.start(answers: [status, 200, 200])
        let logs = CapturedLogs()
        let webhook = try UnregisteredWebhook(configuration: Self.configuration(receiver), logger: logs.logger())
        let delivered = await webhook.deliver(UnregisteredWebhookPolicyTests.event("device-\(status)"))
        await receiver.stop()
        #expect(!delivered)
        #expect(receiver.requests.count == 1)
        let errors = logs.lines.filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.text.contains("HTTP \(status)") == true)
    }

    /// `408`, `425` and `429` say "later", as a `5xx` does: retried, and delivered on the second attempt.
    @Test(arguments: [408, 425, 429, 500, 503])
    func transientAnswerIsRetried(status: Int) async throws {
        let receiver = try await WebhookReceiver.start(answers: [status, 200])
        let webhook = try UnregisteredWebhook(
            configuration: Self.configuration(receiver), logger: DeliveryFixture.quietLogger("webhook"))
        let delivered = await webhook.deliver(UnregisteredWebhookPolicyTests.event("device-\(status)"))
        await receiver.stop()
        #expect(delivered)
        #expect(receiver.requests.count == 2)
    }

    /// `503` with `Retry-After: 1`: the second attempt comes a second later, not after the 20 ms backoff.
    @Test func retryAfterSecondsIsHonoured() async throws {
        let receiver = try await WebhookReceiver.start(answers: [503, 200], retryAfter: "1")
        let webhook = try UnregisteredWebhook(
            configuration: Self.configuration(receiver), logger: DeliveryFixture.quietLogger("webhook"))
        #expect(await webhook.deliver(UnregisteredWebhookPolicyTests.event("device-s")))
        await receiver.stop()
        let gap = try Self.gap(receiver)
        #expect(gap >= 0.95 && gap < 5, "second attempt \(gap) s after the first")
    }

    /// `429` with `Retry-After` as an HTTP date 3 s ahead, through the queue (`notify`, `run`): the second attempt
    /// waits for that date (whole seconds: at least 2 s), not for the 20 ms backoff.
    @Test func retryAfterDateIsHonouredByTheQueue() async throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: Date().addingTimeInterval(3))
        let receiver = try await WebhookReceiver.start(answers: [429, 200], retryAfter: date)
        let webhook = try UnregisteredWebhook(
            configuration: Self.configuration(receiver), logger: DeliveryFixture.quietLogger("webhook"))
        let running = Task { await webhook.run() }
        webhook.notify(UnregisteredWebhookPolicyTests.event("device-d"))
        let deadline = ContinuousClock.now + .seconds(10)
        while receiver.requests.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        webhook.finish()
        await running.value
        await receiver.stop()
        let gap = try Self.gap(receiver)
        #expect(gap >= 1.9 && gap < 5, "second attempt \(gap) s after the first (Retry-After: \(date))")
    }

    /// A `Retry-After` beyond `maxBackoff` waits `maxBackoff` (the policy's bound holds whatever a receiver asks).
    @Test func retryAfterIsBoundedByMaxBackoff() async throws {
        let receiver = try await WebhookReceiver.start(answers: [503, 200], retryAfter: "3600")
        var configuration = try Self.configuration(receiver)
        configuration.maxBackoff = .milliseconds(300)
        let webhook = try UnregisteredWebhook(configuration: configuration, logger: DeliveryFixture.quietLogger("webhook"))
        #expect(await webhook.deliver(UnregisteredWebhookPolicyTests.event("device-b")))
        await receiver.stop()
        let gap = try Self.gap(receiver)
        #expect(gap >= 0.25 && gap < 2, "second attempt \(gap) s after the first")
    }
}
