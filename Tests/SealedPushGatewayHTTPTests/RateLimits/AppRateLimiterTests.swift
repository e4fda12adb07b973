import Foundation
import Testing

@testable import SealedPushGatewayHTTP

/// The token buckets of the per-app rate limits (issue 17 §12), on a clock the test moves.
@Suite struct AppRateLimiterTests {
    final class TestClock: @unchecked Sendable {
        private let lock = NSLock()
        private var instant = ContinuousClock.now
        var now: ContinuousClock.Instant { lock.withLock { instant } }
        func advance(_ duration: Duration) { lock.withLock { instant = instant.advanced(by: duration) } }
    }

    @Test func sendsRefillAtTheirRateUpToTheBurstPerApp() {
        let clock = TestClock()
        let limiter = AppRateLimiter(
            limits: RateLimits(
                defaults: .init(sendsPerSecond: 2, sendBurst: 3),
                apps: ["bulk": .init(sendsPerSecond: 0.5, sendBurst: 1), "free": .init()]),
            now: { clock.now })
        #expect((0..<3).map { _ in limiter.admitSend(appID: "chat") } == [nil, nil, nil])  // the burst
        #expect(limiter.admitSend(appID: "chat") == 1)  // one token comes back in 0.5 s: "1 s" (whole seconds)
        #expect(limiter.admitSend(appID: "other") == nil)  // another app has its own bucket
        clock.advance(.milliseconds(500))
        #expect(limiter.admitSend(appID: "chat") == nil)
        #expect(limiter.admitSend(appID: "chat") == 1)
        clock.advance(.seconds(60))  // a long pause refills only up to the burst
        #expect((0..<4).map { _ in limiter.admitSend(appID: "chat") } == [nil, nil, nil, 1])
        // A named app gets its own limits, not the defaults.
        #expect(limiter.admitSend(appID: "bulk") == nil)
        #expect(limiter.admitSend(appID: "bulk") == 2)
        #expect((0..<100).allSatisfy { _ in limiter.admitSend(appID: "free") == nil })
    }

    @Test func aSendOverTheDeviceBurstGoesThroughOnceAndTheNextWaitsForTheDebt() {
        let clock = TestClock()
        let limiter = AppRateLimiter(
            limits: RateLimits(defaults: .init(devicesPerSecond: 10, deviceBurst: 20)), now: { clock.now })
        #expect(limiter.admitDevices(appID: "chat", count: 50) == nil)  // full bucket: admitted, 30 in debt
        #expect(limiter.admitDevices(appID: "chat", count: 1) == 4)  // 30 tokens at 10/s: just over 3 s
        clock.advance(.seconds(3))
        #expect(limiter.admitDevices(appID: "chat", count: 1) == 1)
        clock.advance(.milliseconds(100))
        #expect(limiter.admitDevices(appID: "chat", count: 1) == nil)
        #expect(limiter.admitSend(appID: "chat") == nil)  // no send limit configured
    }

    @Test func refusedReceiptsAreLimitedPerClientWhateverAppAndTokensComeBackForReceiptsThatCount() {
        let clock = TestClock()
        let limiter = AppRateLimiter(
            limits: RateLimits(
                defaults: .init(refusedReceiptsPerSecondPerClient: 1, refusedReceiptBurstPerClient: 3),
                apps: ["chat": .init(sendsPerSecond: 1)]),
            now: { clock.now })
        #expect((0..<3).map { _ in limiter.admitRefusedReceipt(client: "192.0.2.1") } == [nil, nil, nil])
        #expect(limiter.admitRefusedReceipt(client: "192.0.2.1") == 1)
        #expect(limiter.admitRefusedReceipt(client: "192.0.2.2") == nil)  // another client has its own bucket
        // A receipt that counted gives its token back (up to the burst).
        limiter.giveBackRefusedReceipt(client: "192.0.2.1")
        #expect(limiter.admitRefusedReceipt(client: "192.0.2.1") == nil)
        #expect(limiter.admitRefusedReceipt(client: "192.0.2.1") == 1)
        clock.advance(.seconds(1))
        #expect(limiter.admitRefusedReceipt(client: "192.0.2.1") == nil)
        // The device keys' buckets are apart from it.
        #expect(limiter.admitReceipt(appID: "chat", keyID: "6619128fcf0a647b") == nil)
    }
}
