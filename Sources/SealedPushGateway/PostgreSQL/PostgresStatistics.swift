import Foundation

/// When the gateway's own `ANALYZE` of the queue is due (PostgreSQL's planner statistics).
///
/// The claim's plan depends on them: a fresh database, or a queue that grew in a burst from a few rows to tens of
/// thousands, is planned from stale estimates (sequential scans instead of the `jobs_app_due` walks) until autovacuum's
/// next look, a minute later by default and only past its own threshold. Measured: 1,811 deliveries in the first 7 s
/// of a 40,000 burst with one PostgreSQL backend at 93 % CPU, then 6,260 in the 1.2 s after one `ANALYZE`. So the
/// store analyzes `jobs` and `notifications` itself while the queue grows (and `devices`, when autovacuum's threshold
/// says its statistics are stale): once 1,000 jobs (and a fifth of what the tables held at the last analyze) were
/// added, then again every second for as long as that keeps being true, one at a time, off the request path.
///
/// Added means added to the queue a claim walks: jobs enqueued without a lease, and jobs given back for a retry. A job
/// handed over at enqueue (claimed under the enqueuing node's lease) and then ended never waits there, so a gateway
/// that keeps up with its sends analyzes nothing. Counting every enqueued and every ended job, it analyzed both
/// tables up to once a second with the queue empty: 19 statements in the 10 s capacity phase of
/// `scripts/gateway-load.sh postgres`, 12 µs of the server's time a send.
/// Thread-safe.
final class PostgresStatistics: @unchecked Sendable {
    private let lock = NSLock()
    private var addedSinceAnalyze = 0
    private var rowsAtAnalyze = 0
    private var running = false
    private var loops = 0

    /// How many analyze loops ``added(_:)`` started so far.
    var loopsStarted: Int { lock.withLock { loops } }

    static let minimumAdded = 1_000
    static let interval: Duration = .seconds(1)

    /// Counts jobs added to the queue; true when the caller should start an analyze loop now (none runs and enough were
    /// added).
    func added(_ count: Int) -> Bool {
        lock.withLock {
            addedSinceAnalyze += count
            guard !running, due() else { return false }
            running = true
            loops += 1
            take()
            return true
        }
    }

    /// Asked by the loop after each analyze and ``interval``: true to analyze again (enough were added meanwhile),
    /// false to stop (the next additions start a new loop).
    func again() -> Bool {
        lock.withLock {
            guard due() else {
                running = false
                return false
            }
            take()
            return true
        }
    }

    private func due() -> Bool { addedSinceAnalyze >= max(Self.minimumAdded, rowsAtAnalyze / 5) }

    private func take() {
        rowsAtAnalyze += addedSinceAnalyze
        addedSinceAnalyze = 0
    }
}
