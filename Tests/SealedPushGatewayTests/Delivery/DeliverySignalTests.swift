import Foundation
@testable import SealedPushGateway
import Testing

/// The claim loop's signal: when the queue counts as drained (jobs may be handed over) and which events wake the
/// loop. A send that ends is quiet only while the queue is drained and nothing waits to be claimed.
@Suite("Delivery signal")
struct DeliverySignalTests {
    /// A claim that found fewer jobs than it asked for drains the queue even if jobs were queued while it ran (under
    /// a steady stream of sends, every claim overlaps some); those jobs keep the loop awake until the next claim.
    @Test func jobsQueuedDuringAClaimDrainTheQueueButKeepTheLoopAwake() async throws {
        let signal = DeliverySignal()
        for _ in 0..<3 { signal.sendStarted() }
        signal.jobsQueued()
        await signal.wait(upTo: .seconds(10))  // the loop takes the wake-up and claims
        let generation = signal.claimStarting()
        signal.jobsQueued()  // a send queued while the claim ran
        signal.markDrained(since: generation)
        #expect(signal.reserve(1, limit: 8), "newer sends are handed over")
        signal.release(1, reserved: true)
        await signal.wait(upTo: .seconds(10))  // the queued send's wake-up
        signal.sendEnded()
        #expect(await Self.waited(signal, upTo: .seconds(10)) < .seconds(5), "a send ended: the loop claims the queued jobs")

        // The next claim starts (and takes them): ended sends are quiet again.
        signal.markDrained(since: signal.claimStarting())
        signal.sendEnded()
        #expect(await Self.waited(signal, upTo: .milliseconds(300)) >= .milliseconds(250), "quiet once drained")
    }

    /// Without jobs queued meanwhile, a drained queue keeps ended sends quiet (thousands of them a second under a
    /// stream of handed-over sends), and a queued job ends the drained state and wakes the loop.
    @Test func aDrainedQueueIsQuietUntilAJobIsQueued() async throws {
        let signal = DeliverySignal()
        signal.sendStarted()
        signal.markDrained(since: signal.claimStarting())
        signal.sendEnded()
        #expect(await Self.waited(signal, upTo: .milliseconds(300)) >= .milliseconds(250))
        signal.jobsQueued()
        #expect(!signal.reserve(1, limit: 8), "the queue holds a job: nothing is handed over")
        #expect(await Self.waited(signal, upTo: .seconds(10)) < .seconds(5))
    }

    private static func waited(_ signal: DeliverySignal, upTo limit: Duration) async -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        await signal.wait(upTo: limit)
        return start.duration(to: clock.now)
    }
}
