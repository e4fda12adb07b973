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
/// Each analyze also has every session plan its prepared statements again. A session settles on a statement's generic
/// plan after its first executions, made from the statistics of that moment, and keeps it until the table's
/// statistics change: without these analyzes, sessions that started on a new database kept plans made when `jobs`
/// held a few rows — a batch of job ends took 0.5 ms a call instead of 0.15 in `scripts/gateway-load.sh postgres`,
/// when only jobs that wait in the queue were counted (tried, not kept). So every enqueued and every ended job counts.
/// Thread-safe.
final class PostgresStatistics: @unchecked Sendable {
    private let lock = NSLock()
    private var addedSinceAnalyze = 0
    private var rowsAtAnalyze = 0
    private var running = false

    static let minimumAdded = 1_000
    static let interval: Duration = .seconds(1)

    /// Counts added jobs; true when the caller should start an analyze loop now (none runs and enough were added).
    func added(_ count: Int) -> Bool {
        lock.withLock {
            addedSinceAnalyze += count
            guard !running, due() else { return false }
            running = true
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
