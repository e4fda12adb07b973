#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A source of the current time in UNIX seconds, injectable so tests and tools can pin "now".
///
/// The receiver compares this time with an envelope's `expiresAt` (spec §8 step 10) and the replay guard uses it
/// to prune expired message ids.
public struct SealedPushClock: Sendable {
    private let read: @Sendable () -> UInt64

    /// Creates a clock from a closure returning UNIX seconds.
    ///
    /// - Parameter now: Returns the current time in UNIX seconds; called once per decision.
    public init(_ now: @escaping @Sendable () -> UInt64) {
        self.read = now
    }

    /// The system wall clock (`Date()`), truncated to whole seconds; times before 1970 read as 0.
    public static let system = SealedPushClock {
        let seconds = Date().timeIntervalSince1970
        return seconds > 0 ? UInt64(seconds) : 0
    }

    /// A clock frozen at `seconds`.
    ///
    /// - Parameter seconds: The UNIX time this clock always returns.
    /// - Returns: A clock that always reads `seconds`.
    public static func fixed(_ seconds: UInt64) -> SealedPushClock {
        SealedPushClock { seconds }
    }

    /// The current time in UNIX seconds.
    public func now() -> UInt64 {
        read()
    }
}
