/// Bounded retries with exponential backoff and jitter (`Specs/fcm-v1.md` §6).
public struct FCMRetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included (default 5).
    public var maxAttempts: Int
    /// The longest time from the first attempt to giving up (default 60 s); a `Retry-After` beyond it ends the send.
    public var maxTotal: Duration
    /// The first backoff (default 250 ms).
    public var initialBackoff: Duration
    /// The longest backoff (default 10 s).
    public var maxBackoff: Duration

    /// Creates a policy.
    public init(
        maxAttempts: Int = 5, maxTotal: Duration = .seconds(60), initialBackoff: Duration = .milliseconds(250),
        maxBackoff: Duration = .seconds(10)
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.maxTotal = maxTotal
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }

    /// The backoff before retry `retry` (1-based): `initial × 2^(retry−1)`, capped, with jitter over its upper half.
    /// - Parameter retry: The retry number, 1 for the first retry.
    /// - Returns: The delay.
    public func backoff(forRetry retry: Int) -> Duration {
        let initial = Self.seconds(initialBackoff)
        let cap = Self.seconds(maxBackoff)
        let delay = min(cap, initial * Double(1 << min(max(0, retry - 1), 30)))
        return .nanoseconds(Int64(max(0, delay / 2 + Double.random(in: 0...1) * delay / 2) * 1e9))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
