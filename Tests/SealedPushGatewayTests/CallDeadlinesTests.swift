import Foundation
import NIOCore
import Synchronization
import Testing

@testable import SealedPushGateway

/// The shared deadlines of store calls: one that passes fires once, within a tick; one removed first never fires;
/// nothing is kept after the calls end, and `AbandonableCall` still returns at its deadline and when cancelled.
@Suite("Call deadlines")
struct CallDeadlinesTests {
    @Test func aPassedDeadlineFiresOnceWithinATick() async throws {
        let deadlines = CallDeadlines(tick: .milliseconds(20))
        let fired = Mutex<[ContinuousClock.Instant]>([])
        let start = ContinuousClock.now
        _ = deadlines.add(in: .milliseconds(100)) { fired.withLock { $0.append(.now) } }
        try await Task.sleep(for: .milliseconds(600))
        let times = fired.withLock { $0 }
        #expect(times.count == 1, "fired \(times.count) times")
        if let first = times.first {
            #expect(start.duration(to: first) >= .milliseconds(100), "fired early: \(start.duration(to: first))")
            // One tick late at most, plus what a loaded machine adds to a timer.
            #expect(start.duration(to: first) < .milliseconds(400), "fired late: \(start.duration(to: first))")
        }
        #expect(deadlines.count == 0)
    }

    /// The deadlines are a second away: adding and removing 10,000 took more than the 50 ms this test once gave them
    /// on a loaded machine (the whole gateway test suite at once, debug build), and 3,148 fired before their removal.
    @Test func aRemovedDeadlineNeverFiresAndNothingIsKept() async throws {
        let deadlines = CallDeadlines(tick: .milliseconds(10))
        let fired = Mutex(0)
        let start = ContinuousClock.now
        let ids = (0..<10_000).map { _ in deadlines.add(in: .seconds(1)) { fired.withLock { $0 += 1 } } }
        #expect(deadlines.count == 10_000)
        for id in ids { deadlines.remove(id) }
        deadlines.remove(ids[0])  // twice: nothing
        #expect(deadlines.count == 0)
        try #require(start.duration(to: .now) < .seconds(1), "adding and removing took longer than the deadlines")
        try await Task.sleep(until: start + .milliseconds(1_300))
        #expect(fired.withLock { $0 } == 0)
    }

    @Test func abandonableCallReturnsAtItsDeadlineAndOnCancellation() async throws {
        struct TimedOut: Error {}
        let start = ContinuousClock.now
        await #expect(throws: TimedOut.self) {
            try await AbandonableCall<Int>.run(deadline: .milliseconds(200), timeoutError: { TimedOut() }) {
                try? await Task.sleep(for: .seconds(30))
                return 1
            }
        }
        let took = start.duration(to: .now)
        #expect(took >= .milliseconds(200) && took < .seconds(5), "returned after \(took)")

        let call = Task {
            try await AbandonableCall<Int>.run(deadline: .seconds(60), timeoutError: { TimedOut() }) {
                try? await Task.sleep(for: .seconds(30))
                return 0
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        let cancelled = ContinuousClock.now
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(cancelled.duration(to: .now) < .seconds(5))

        // A call that ends in time, or is cancelled, leaves no deadline behind.
        let own = CallDeadlines(tick: .milliseconds(20))
        for _ in 0..<100 {
            let seven = try await AbandonableCall<Int>.run(deadline: .seconds(60), in: own, timeoutError: { TimedOut() }) {
                7
            }
            #expect(seven == 7)
        }
        let abandoned = Task {
            try await AbandonableCall<Int>.run(deadline: .seconds(60), in: own, timeoutError: { TimedOut() }) {
                try? await Task.sleep(for: .seconds(30))
                return 0
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        abandoned.cancel()
        _ = try? await abandoned.value
        #expect(own.count == 0)
    }
}
