import SealedPushAPNs
import SealedPushCore
import Testing

@Suite("APNs endpoint and backoff")
struct APNsEndpointTests {
    @Test func parsesURLs() throws {
        #expect(try APNsEndpoint(url: "https://api.push.apple.com") == .production)
        #expect(try APNsEndpoint(url: "https://127.0.0.1:2197/") == APNsEndpoint(host: "127.0.0.1", port: 2197))
        #expect(try APNsEndpoint(url: "https://[::1]:8443") == APNsEndpoint(host: "::1", port: 8443))
        for bad in ["http://x", "https://", "https://x:0", "https://x:70000", "https://x/3/device", "https://u@x", "x"]
        {
            #expect(throws: SealedPushError.self, "\(bad)") { try APNsEndpoint(url: bad) }
        }
        #expect(APNsEndpoint.sandbox.host == "api.development.push.apple.com")
    }

    @Test func backoffGrowsExponentiallyWithBoundedJitter() {
        let policy = APNsRetryPolicy(maxAttempts: 10, initialBackoff: .milliseconds(100), maxBackoff: .seconds(1))
        for _ in 0..<200 {
            let first = policy.backoff(forRetry: 1)
            #expect(first >= .milliseconds(50) && first <= .milliseconds(100))
            let third = policy.backoff(forRetry: 3)  // 400 ms before jitter
            #expect(third >= .milliseconds(200) && third <= .milliseconds(400))
            let capped = policy.backoff(forRetry: 30)
            #expect(capped >= .milliseconds(500) && capped <= .seconds(1))
        }
    }
}
