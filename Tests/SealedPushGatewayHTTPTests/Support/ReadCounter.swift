import Synchronization
import Testing

/// Counts store reads a `HookedGatewayStore` hook reports, to check that a burst of requests read a record about once
/// a second (`RecentlyRead`), not once a request.
final class ReadCounter: Sendable {
    private let state = Mutex<(reads: Int, since: ContinuousClock.Instant)>((0, .now))

    /// The hook: one read of the record with this id.
    func read(_ id: String) { state.withLock { $0.reads += 1 } }

    /// Forgets the reads so far; the burst starts now.
    func start() { state.withLock { $0 = (0, .now) } }

    /// Expects at least one read, and no more than one per second begun since ``start()`` plus two (a read at each
    /// boundary).
    func expectAboutOnceASecond(_ burst: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let (reads, since) = state.withLock { $0 }
        let seconds = Int(since.duration(to: .now).components.seconds)
        #expect(
            reads >= 1 && reads <= seconds + 2, "\(burst) in \(seconds) s read the record \(reads) times",
            sourceLocation: sourceLocation)
    }
}
