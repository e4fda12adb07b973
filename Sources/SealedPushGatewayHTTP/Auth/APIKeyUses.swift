import Foundation
import Logging
import SealedPushGateway

/// Records when each API key was last used (`sealed-push-gateway key list`), at most once a minute per key and
/// node, off the request's path: a request never waits for this write, and a failed write is only logged.
final class APIKeyUses: @unchecked Sendable {
    /// The least time between two writes for one key.
    static let interval: Duration = .seconds(60)
    /// Keys remembered at most; past it the memory starts over (a key then writes once more).
    static let capacity = 10_000

    private let lock = NSLock()
    private var written: [String: ContinuousClock.Instant] = [:]

    /// Records a use of `keyID` at `now` unless one was recorded within ``interval``.
    func record(_ keyID: String, now: Date, store: any GatewayStore, logger: Logger) {
        let instant = ContinuousClock.now
        let due = lock.withLock { () -> Bool in
            if let last = written[keyID], last.duration(to: instant) < Self.interval { return false }
            if written.count >= Self.capacity { written.removeAll(keepingCapacity: true) }
            written[keyID] = instant
            return true
        }
        guard due else { return }
        Task.detached {
            do {
                try await store.touchAPIKey(id: keyID, at: now)
            } catch {
                logger.warning("an API key's last use was not recorded", metadata: ["key": "\(keyID)"])
            }
        }
    }
}
