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

    private func limit(for appID: String) -> RateLimits.Limit {
        lock.withLock { limits.limit(for: appID) }
    }

    /// Takes one send from the app's sends bucket.
    /// - Returns: nil when admitted, else how long until it would be (whole seconds, at least 1).
    func admitSend(appID: String) -> Int? {
        let limit = limit(for: appID)
        guard let rate = limit.sendsPerSecond else { return nil }
        return take(1, key: "s:" + appID, rate: rate, burst: Double(limit.sendBurst ?? max(1, Int(rate))), allowDebt: false)
    }

    /// Takes `count` devices from the app's devices bucket.
    /// - Returns: nil when admitted, else how long until it would be (whole seconds, at least 1).
    func admitDevices(appID: String, count: Int) -> Int? {
        let limit = limit(for: appID)
        guard let rate = limit.devicesPerSecond else { return nil }
        return take(
            Double(count), key: "d:" + appID, rate: rate, burst: Double(limit.deviceBurst ?? max(1, Int(rate))),
            allowDebt: true)
    }

    /// When a new key would pass this many buckets, the ones that have refilled (they hold nothing a new one would
    /// not) are dropped first.
    static let maxBuckets = 100_000

    /// Takes one receipt from the bucket of one device key of an app.
    /// - Returns: nil when admitted, else how long until it would be (whole seconds, at least 1).
    func admitReceipt(appID: String, keyID: String) -> Int? {
        let limit = limit(for: appID)
        let rate = limit.receiptsPerSecondPerDevice ?? RateLimits.Limit.defaultReceiptsPerSecondPerDevice
        let burst = Double(limit.receiptBurstPerDevice ?? RateLimits.Limit.defaultReceiptBurstPerDevice)
        return take(1, key: "r:" + appID + "/" + keyID, rate: rate, burst: burst, allowDebt: false)
    }

    private func take(_ count: Double, key: String, rate: Double, burst: Double, allowDebt: Bool) -> Int? {
        let instant = now()
        return lock.withLock { () -> Int? in
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
    /// Receipt buckets exist only for registered device keys (the endpoint finds the device first), so what stays
    /// is bounded by the apps' devices.
    private func prune(at instant: ContinuousClock.Instant) {
        buckets = buckets.filter { _, bucket in
            let elapsed = bucket.updated.duration(to: instant)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return bucket.tokens + seconds * bucket.rate < bucket.burst
        }
    }
}
