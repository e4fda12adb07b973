/// Bounded retries with exponential backoff and jitter.
///
/// 429, 500 and 503 answers and transport failures are retried; 400, 403, 404, 405, 410 and 413 never are.
/// A request cut off by GOAWAY before APNs processed it (its stream above the GOAWAY's last-stream-id, or refused)
/// is resent at once on a new connection (same `apns-id`) and does not count against `maxAttempts`: it cannot have
/// been delivered, so only the client's deadline bounds such resends. Every other request counts, so a
/// notification gets at most `maxAttempts` requests that APNs may have processed.
public struct APNsRetryPolicy: Sendable, Hashable {
    /// The most requests for one notification that APNs may have processed (first try included), 1...100.
    public var maxAttempts: Int
    /// The delay before the first retry.
    public var initialBackoff: Duration
    /// The largest delay.
    public var maxBackoff: Duration
    /// Growth factor per retry.
    public var multiplier: Double

    /// Creates a policy.
    /// - Parameters:
    ///   - maxAttempts: Requests per notification at most (default 5).
    ///   - initialBackoff: First retry delay (default 250 ms).
    ///   - maxBackoff: Delay cap (default 10 s).
    ///   - multiplier: Growth factor (default 2).
    public init(
        maxAttempts: Int = 5, initialBackoff: Duration = .milliseconds(250), maxBackoff: Duration = .seconds(10),
        multiplier: Double = 2
    ) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.multiplier = multiplier
    }

    /// The delay before retry number `retry` (1 = first retry): `min(maxBackoff, initial × multiplier^(retry−1))`,
    /// then "equal jitter": uniformly random in [delay/2, delay].
    /// - Parameter retry: The retry number, ≥ 1.
    /// - Returns: The delay.
    public func backoff(forRetry retry: Int) -> Duration {
        let initial = Self.seconds(initialBackoff)
        let cap = Self.seconds(maxBackoff)
        var delay = initial
        for _ in 1..<max(1, min(retry, 64)) {
            delay *= multiplier
            if delay >= cap { break }
        }
        delay = min(delay, cap)
        let jittered = delay / 2 + Double.random(in: 0...1) * delay / 2
        return .nanoseconds(Int64(max(0, jittered) * 1e9))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
