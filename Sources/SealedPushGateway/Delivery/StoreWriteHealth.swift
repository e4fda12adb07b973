import Foundation

/// Whether the store took the last write: the readiness `/healthz` reports, fed by the writes themselves (each
/// store's — SQLite's and PostgreSQL's —, the node heartbeat's), so asking costs no write.
///
/// A failure counts until a write succeeds again, or for ``failureWindow`` at most: a node that writes nothing
/// more (no delivery, no traffic) is not kept unready for ever by one failed write.
public final class StoreWriteHealth: @unchecked Sendable {  // its state is behind `lock`
    /// The last write's outcome.
    private struct State {
        var failure: String?
        var at: ContinuousClock.Instant?
        var succeeded: ContinuousClock.Instant?
    }

    private let lock = NSLock()
    private var state = State()
    /// How long a failure counts without a later write.
    public let failureWindow: Duration

    /// Creates a record with nothing written yet (healthy).
    /// - Parameter failureWindow: How long a failure counts without a later write.
    public init(failureWindow: Duration = .seconds(30)) {
        self.failureWindow = failureWindow
    }

    /// A write succeeded.
    public func recordSuccess() {
        let now = ContinuousClock.now
        lock.withLock {
            state.failure = nil
            state.at = now
            state.succeeded = now
        }
    }

    /// A write failed because the store could not write (not because of what was written).
    /// - Parameter reason: A short reason without secrets or paths, such as an SQLite result code's name.
    public func recordFailure(_ reason: String) {
        let now = ContinuousClock.now
        lock.withLock {
            state.failure = reason
            state.at = now
        }
    }

    /// Why the store is not writable: the last write failed within ``failureWindow``; nil otherwise.
    public var problem: String? {
        let now = ContinuousClock.now
        return lock.withLock {
            guard let failure = state.failure, let at = state.at, at.duration(to: now) < failureWindow else {
                return nil
            }
            return failure
        }
    }

    /// When a write last succeeded, if one did.
    public var lastSuccess: ContinuousClock.Instant? { lock.withLock { state.succeeded } }
}
