import Foundation

/// Wakes the claim loop: when a send finishes (a slot is free), and when the service is told to stop. Also counts
/// the sends in flight.
///
/// One waiter at a time (the claim loop). A signal that arrives while nobody waits is kept for the next wait.
final class DeliverySignal: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: CheckedContinuation<Void, Never>?
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
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard let waiter = self.waiter else {
                pending = true
                return nil
            }
            self.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Waits for a wake-up, at most `duration` (returns at once if one is pending).
    func wait(upTo duration: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask { await self.waitForWake() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForWake() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock { () -> Bool in
                    if pending || Task.isCancelled {
                        pending = false
                        return true
                    }
                    waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                let waiter = self.waiter
                self.waiter = nil
                return waiter
            }
            waiter?.resume()
        }
    }
}
