import Foundation
import NIOCore
import NIOPosix

/// Wakes the claim loop: when a send finishes (a slot is free), and when the service is told to stop. Also counts
/// the sends in flight.
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

    /// True once ``stop()`` was called.
    var isStopped: Bool { lock.withLock { stopped } }

    /// The sends running now.
    var inFlight: Int { lock.withLock { sendsInFlight } }

    /// Stop claiming: wakes the loop.
    func stop() {
        lock.withLock { stopped = true }
        wake()
    }

    /// A send started.
    func sendStarted() { lock.withLock { sendsInFlight += 1 } }

    /// A send ended: wakes the loop.
    func sendEnded() {
        lock.withLock { sendsInFlight -= 1 }
        wake()
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
