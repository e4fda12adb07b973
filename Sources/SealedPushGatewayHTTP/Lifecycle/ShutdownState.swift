import NIOConcurrencyHelpers

/// Whether the gateway's graceful stop has begun: `/healthz` then answers `503` with status `stopping`.
public final class ShutdownState: Sendable {
    private let stopping = NIOLockedValueBox(false)

    /// A state that is not stopping.
    public init() {}

    /// Whether the graceful stop has begun.
    public var isStopping: Bool { stopping.withLockedValue { $0 } }

    /// Marks the graceful stop as begun (for good).
    func markStopping() { stopping.withLockedValue { $0 = true } }
}
