import Foundation

/// Gives the heap's free pages back to the system once delivery has gone quiet after a burst.
///
/// glibc's allocator keeps memory a burst freed in its arenas (one per thread that allocated, up to eight per core),
/// so without this the gateway's resident memory after a burst stays at the burst's high-water mark, differing from
/// arena to arena, and says little about what is live. `malloc_trim(0)` after ``quietPeriod`` without a send
/// returns those pages; it runs once per quiet spell, never under load. Where the C library has no `malloc_trim`
/// (musl, Darwin) it does nothing.
struct IdleMemoryRelease {
    /// How long delivery must have been idle (nothing claimed, nothing in flight) before the heap is trimmed.
    static let quietPeriod: Duration = .seconds(1)

    private typealias MallocTrim = @convention(c) (Int) -> Int32
    private static let mallocTrim: MallocTrim? = {
        #if os(Linux)
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: MallocTrim.self)
        #else
        return nil
        #endif
    }()

    /// Whether this C library has `malloc_trim` (glibc): without it ``trimHeap()`` does nothing.
    static var canTrim: Bool { mallocTrim != nil }

    /// Gives the heap's free pages back to the system (`malloc_trim(0)`), where the C library can.
    static func trimHeap() { _ = mallocTrim?(0) }

    private let trim: () -> Void
    private var busySinceTrim = false
    private var idleSince: ContinuousClock.Instant?

    /// - Parameter trim: What trims the heap (``trimHeap()``; tests count the calls).
    init(trim: @escaping () -> Void = IdleMemoryRelease.trimHeap) {
        self.trim = trim
    }

    /// Notes what the delivery loop saw, and trims the heap when delivery has been idle for ``quietPeriod`` since
    /// its last work.
    /// - Parameters:
    ///   - idle: Nothing was claimed and nothing is in flight.
    ///   - now: The loop's clock.
    /// - Returns: Whether the heap was trimmed now.
    @discardableResult
    mutating func observe(idle: Bool, now: ContinuousClock.Instant) -> Bool {
        guard idle else {
            busySinceTrim = true
            idleSince = nil
            return false
        }
        guard busySinceTrim else { return false }
        guard let since = idleSince else {
            idleSince = now
            return false
        }
        guard since.duration(to: now) >= Self.quietPeriod else { return false }
        busySinceTrim = false
        idleSince = nil
        trim()
        return true
    }
}
