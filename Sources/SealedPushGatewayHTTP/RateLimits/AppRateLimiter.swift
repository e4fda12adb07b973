import Foundation

/// The token buckets of ``RateLimits``, per app, in memory (each node limits what it accepts itself).
///
/// A sends bucket admits a send while it holds a whole token and takes one. A devices bucket admits a send while it
/// holds any tokens and takes as many as the send reaches — it may go into debt, so a send to more devices than the
/// burst is never refused for ever; the sends after it wait until the debt is paid. A refused send takes nothing.
final class AppRateLimiter: @unchecked Sendable {
    /// Which limit refused a send.
    enum Kind: String, Sendable {
        case sends, devices
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
        var rate: Double
        var burst: Double
    }

    private var limits: RateLimits  // with the lock held
    private let lock = NSLock()
    private var buckets: [String: Bucket] = [:]
    private let now: @Sendable () -> ContinuousClock.Instant

    init(limits: RateLimits, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.limits = limits
        self.now = now
    }

    /// Replaces the limits (a configuration reloaded on `SIGHUP`). Buckets keep their tokens: a raised limit refills
    /// at its new rate from what is left, a lowered one caps what is left at its new burst.
    func update(limits: RateLimits) {
        lock.withLock { self.limits = limits }
    }

    /// Takes one send from the app's sends bucket.
    /// - Returns: nil when admitted, else how long until it would be (whole seconds, at least 1).
    func admitSend(appID: String) -> Int? {
        take(1, appID: appID, key: "s:" + appID, allowDebt: false) { limit in
            limit.sendsPerSecond.map { ($0, Double(limit.sendBurst ?? max(1, Int($0)))) }
        }
    }

    /// Takes `count` devices from the app's devices bucket.
    /// - Returns: nil when admitted, else how long until it would be (whole seconds, at least 1).
    func admitDevices(appID: String, count: Int) -> Int? {
        take(Double(count), appID: appID, key: "d:" + appID, allowDebt: true) { limit in
            limit.devicesPerSecond.map { ($0, Double(limit.deviceBurst ?? max(1, Int($0)))) }
        }
    }

    /// When a new key would pass this many buckets, the ones that have refilled (they hold nothing a new one would
    /// not) are dropped first.
    static let maxBuckets = 100_000

    /// Takes one receipt from the bucket of one device key of an app.
    /// - Returns: nil when admitted, else how long until it would be (whole seconds, at least 1).
    func admitReceipt(appID: String, keyID: String) -> Int? {
        take(1, appID: appID, key: "r:" + appID + "/" + keyID, allowDebt: false) { limit in
            (limit.receiptsPerSecondPerDevice ?? RateLimits.Limit.defaultReceiptsPerSecondPerDevice,
             Double(limit.receiptBurstPerDevice ?? RateLimits.Limit.defaultReceiptBurstPerDevice))
        }
    }

    /// Takes one refused receipt from the bucket of a client address (``RateLimits/Limit/refusedReceiptsPerSecondPerClient``,
    /// the top-level limit whatever app the path names): taken before a receipt is looked at, given back
    /// (``giveBackRefusedReceipt(client:)``) when it counts.
    /// - Returns: nil when admitted, else how long until it would be (whole seconds, at least 1).
    func admitRefusedReceipt(client: String) -> Int? {
        take(1, appID: nil, key: "x:" + client, allowDebt: false) { limit in
            (limit.refusedReceiptsPerSecondPerClient ?? RateLimits.Limit.defaultRefusedReceiptsPerSecondPerClient,
             Double(limit.refusedReceiptBurstPerClient ?? RateLimits.Limit.defaultRefusedReceiptBurstPerClient))
        }
    }

    /// Gives back the token ``admitRefusedReceipt(client:)`` took, for a receipt that counted after all.
    func giveBackRefusedReceipt(client: String) {
        lock.withLock {
            guard var bucket = buckets["x:" + client] else { return }
            bucket.tokens = min(bucket.burst, bucket.tokens + 1)
            buckets["x:" + client] = bucket
        }
    }

    /// Reads the app's limit and takes from its bucket under one lock (the limits change on `SIGHUP`).
    /// - Parameter bucketOf: The rate and burst of this bucket under the app's limit, or nil when it has none.
    /// - Parameter appID: The app whose limit applies; nil: the top-level limit (``RateLimits/defaults``).
    private func take(
        _ count: Double, appID: String?, key: String, allowDebt: Bool,
        bucketOf: (RateLimits.Limit) -> (rate: Double, burst: Double)?
    ) -> Int? {
        let instant = now()
        return lock.withLock { () -> Int? in
            guard let (rate, burst) = bucketOf(appID.map { limits.limit(for: $0) } ?? limits.defaults) else { return nil }
            if buckets[key] == nil, buckets.count >= Self.maxBuckets { prune(at: instant) }
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: instant, rate: rate, burst: burst)
            let elapsed = bucket.updated.duration(to: instant)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + max(0, seconds) * rate)
            bucket.updated = instant
            let admitted = allowDebt ? bucket.tokens > 0 : bucket.tokens >= count
            if admitted { bucket.tokens -= count }
            buckets[key] = bucket
            guard !admitted else { return nil }
            let missing = allowDebt ? -bucket.tokens + 1e-9 : count - bucket.tokens
            return max(1, Int((missing / rate).rounded(.up)))
        }
    }

    /// Drops the buckets that have refilled (called with the lock held): a new one would start just as full.
    /// Receipt buckets exist only for registered device keys whose receipts opened, so what stays is bounded by the
    /// apps' devices; refused-receipt buckets, one per client address, go once refilled.
    private func prune(at instant: ContinuousClock.Instant) {
        buckets = buckets.filter { _, bucket in
            let elapsed = bucket.updated.duration(to: instant)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return bucket.tokens + seconds * bucket.rate < bucket.burst
        }
    }
}
