import Foundation
import NIOCore
import NIOPosix

/// Wakes the claim loop: when a send finishes (a slot is free), when jobs were queued, and when the service is told
/// to stop. Also counts the sends in flight (with the slots reserved for jobs handed over at enqueue), and knows
/// whether the queue is drained (the last claim found fewer due jobs than it asked for, and nothing was queued
/// since it ended): only then are jobs handed over, so a queue that holds jobs is not passed by newer ones. Jobs
/// queued while that claim ran do not undo it (under a steady stream of sends every claim overlaps some, and the
/// node would otherwise never leave the queue once it had to use it: a claim transaction more per job): newer sends
/// are handed over, and the loop claims those jobs next — woken by their ``jobsQueued()`` and, until that claim
/// starts, by every send that ends, as while the queue is not drained.
///
/// One waiter at a time (the claim loop). A signal that arrives while nobody waits is kept for the next wait.
///
/// A wait's time limit is a NIO scheduled task, cancelled when the wait ends early: on this platform's runtime a
/// cancelled `Task.sleep` kept its task allocated for good (about 190 bytes a wait, found with heaptrack).
final class DeliverySignal: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: CheckedContinuation<Void, Never>?
    /// The current wait's time limit, and which wait it belongs to.
    private var timer: Scheduled<Void>?
    private var waitNumber = 0
    private var stopped = false
    private var sendsInFlight = 0
    /// Slots reserved for jobs about to be handed over (``reserve(_:limit:)``).
    private var reservedSlots = 0
    /// Whether the last claim found the queue drained and nothing was queued since it ended.
    private var drained = false
    /// Counts ``jobsQueued()`` calls: tells ``markDrained(since:)`` whether jobs were queued while its claim ran.
    private var queuedGeneration = 0
    /// Jobs were queued while the last claim ran: ended sends wake the loop until its next claim starts.
    private var claimDue = false

    /// True once ``stop()`` was called.
    var isStopped: Bool { lock.withLock { stopped } }

    /// The slots taken: sends running now and slots reserved for jobs about to be handed over.
    var inFlight: Int { lock.withLock { sendsInFlight + reservedSlots } }

    /// The sends running now (what a stop waits for: reserved slots whose jobs come after the stop are not sent).
    var sendsRunning: Int { lock.withLock { sendsInFlight } }

    /// Stop claiming: wakes the loop.
    func stop() {
        lock.withLock { stopped = true }
        wake()
    }

    /// A send started.
    func sendStarted() { lock.withLock { sendsInFlight += 1 } }

    /// Jobs went into the queue (not handed over): the queue is not drained any more. Wakes the loop.
    func jobsQueued() {
        lock.withLock {
            queuedGeneration += 1
            drained = false
        }
        wake()
    }

    /// A claim starts.
    /// - Returns: What its ``markDrained(since:)`` needs.
    func claimStarting() -> Int {
        lock.withLock {
            claimDue = false
            return queuedGeneration
        }
    }

    /// The claim that started at `generation` (``claimStarting()``) found fewer due jobs than it asked for: the
    /// queue holds nothing due but jobs queued while it ran, which the next claim takes (their ``jobsQueued()``
    /// left a wake-up, and ended sends wake the loop until that claim starts).
    func markDrained(since generation: Int) {
        lock.withLock {
            drained = true
            if queuedGeneration != generation { claimDue = true }
        }
    }

    /// Reserves `count` slots if the queue is drained, the loop is not stopped, and they leave the slots taken at
    /// most `limit`.
    /// - Returns: Whether they were reserved.
    func reserve(_ count: Int, limit: Int) -> Bool {
        lock.withLock {
            guard !stopped, drained, sendsInFlight + reservedSlots + count <= limit else { return false }
            reservedSlots += count
            return true
        }
    }

    /// `count` reserved slots become sends (their jobs were handed over).
    func handedOver(_ count: Int) {
        lock.withLock {
            reservedSlots -= count
            sendsInFlight += count
        }
    }

    /// `count` reserved slots (`reserved: true`) or sends will not happen: as ``sendEnded()`` each.
    func release(_ count: Int, reserved: Bool) {
        guard count > 0 else { return }
        let quiet = lock.withLock {
            if reserved { reservedSlots -= count } else { sendsInFlight -= count }
            return drained && !claimDue && !stopped
        }
        if !quiet { wake() }
    }

    /// A send ended: wakes the loop to claim into the free slot — unless the queue is drained (nothing to claim
    /// before the next poll or ``jobsQueued()``; under a stream of handed-over sends, thousands of wake-ups a second
    /// for nothing) and the loop is not stopping.
    func sendEnded() {
        let quiet = lock.withLock {
            sendsInFlight -= 1
            return drained && !claimDue && !stopped
        }
        if !quiet { wake() }
    }

    /// Wakes the waiter, or the next wait if nobody waits.
    func wake() {
        let (waiter, timer) = lock.withLock { () -> (CheckedContinuation<Void, Never>?, Scheduled<Void>?) in
            guard let waiter = self.waiter else {
                pending = true
                return (nil, nil)
            }
            defer {
                self.waiter = nil
                self.timer = nil
            }
            return (waiter, self.timer)
        }
        timer?.cancel()
        waiter?.resume()
    }

    /// Waits for a wake-up, at most `duration` (returns at once if one is pending, or when the task is cancelled).
    func wait(upTo duration: Duration) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let number: Int? = lock.withLock {
                    if pending || Task.isCancelled {
                        pending = false
                        return nil
                    }
                    waiter = continuation
                    waitNumber += 1
                    return waitNumber
                }
                guard let number else {
                    continuation.resume()
                    return
                }
                let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(duration)) {
                    self.timeOut(number)
                }
                let stale = lock.withLock {
                    guard waitNumber == number, waiter != nil else { return true }
                    self.timer = timer
                    return false
                }
                if stale { timer.cancel() }
            }
        } onCancel: {
            wakeWaiterOnly()
        }
    }

    /// Ends wait `number` if it is still waiting.
    private func timeOut(_ number: Int) {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard waitNumber == number, let waiter = self.waiter else { return nil }
            self.waiter = nil
            self.timer = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Ends the current wait without leaving a signal pending (the waiting task was cancelled).
    private func wakeWaiterOnly() {
        let (waiter, timer) = lock.withLock { () -> (CheckedContinuation<Void, Never>?, Scheduled<Void>?) in
            defer {
                self.waiter = nil
                self.timer = nil
            }
            return (self.waiter, self.timer)
        }
        timer?.cancel()
        waiter?.resume()
    }
}
