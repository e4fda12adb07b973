import Foundation
import NIOCore
import NIOPosix

/// Wakes the webhook's outbox reader: an event was written, a worker is free, or the webhook is stopping. One waiter
/// at a time; a wake-up while nobody waits is kept for the next wait.
///
/// The wait's time limit is a NIO scheduled task, cancelled when the wait ends early (as ``DeliverySignal``'s: a
/// cancelled `Task.sleep` keeps its task allocated on this platform's runtime).
final class WebhookWakeUp: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var timer: Scheduled<Void>?
    private var waitNumber = 0

    /// Ends the current wait, or the next one at once.
    func wake() {
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            guard let waiting = waiter else {
                pending = true
                return nil
            }
            waiter = nil
            timer?.cancel()
            timer = nil
            return waiting
        }
        waiting?.resume()
    }

    /// Waits for ``wake()``, at most `limit`, or until the task is cancelled.
    func wait(upTo limit: Duration) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now: Bool = lock.withLock {
                    if pending || Task.isCancelled {
                        pending = false
                        return true
                    }
                    waiter = continuation
                    waitNumber += 1
                    let number = waitNumber
                    timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(limit)) {
                        [self] in timeUp(number)
                    }
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            wake()
        }
    }

    private func timeUp(_ number: Int) {
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            guard waitNumber == number, let waiting = waiter else { return nil }
            waiter = nil
            timer = nil
            return waiting
        }
        waiting?.resume()
    }
}
