import Foundation
import NIOCore
import NIOPosix

/// The deadlines of the calls in flight (``AbandonableCall``), kept by one repeating timer instead of a timer each.
///
/// A NIO scheduled task per call cost an event-loop wake-up to schedule it and another to cancel it (`eventfd`
/// writes, a heap removal, a context switch): 6 % of the gateway's CPU with one device per send, where every send
/// makes four or five store calls and almost none of them ever reaches its deadline. Here adding and removing a
/// deadline is a dictionary insertion and removal under a lock; one timer, running only while deadlines are kept,
/// fires those that have passed every ``tick``. A deadline fires between its instant and one tick later.
final class CallDeadlines: @unchecked Sendable {
    /// The deadlines of the whole process.
    static let shared = CallDeadlines(tick: .milliseconds(20))

    /// How often passed deadlines are looked for.
    let tick: TimeAmount

    private struct Entry {
        let deadline: NIODeadline
        let fire: @Sendable () -> Void
    }

    private let lock = NSLock()
    private var entries: [UInt64: Entry] = [:]
    private var nextID: UInt64 = 0
    private var timer: RepeatedTask?

    init(tick: TimeAmount) {
        self.tick = tick
    }

    /// Keeps a deadline `duration` from now.
    /// - Parameters:
    ///   - duration: The time until the deadline.
    ///   - fire: Called once the deadline has passed, unless ``remove(_:)`` came first; on the timer's event loop,
    ///     outside any lock.
    /// - Returns: The deadline's id for ``remove(_:)``.
    func add(in duration: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let deadline = NIODeadline.now() + TimeAmount(duration)
        return lock.withLock {
            nextID &+= 1
            entries[nextID] = Entry(deadline: deadline, fire: fire)
            if timer == nil {
                timer = MultiThreadedEventLoopGroup.singleton.any().scheduleRepeatedTask(
                    initialDelay: tick, delay: tick
                ) { [self] task in sweep(task) }
            }
            return nextID
        }
    }

    /// Forgets a deadline (its call ended first). Removing one that already fired, or twice, does nothing.
    func remove(_ id: UInt64) {
        _ = lock.withLock { entries.removeValue(forKey: id) }
    }

    /// How many deadlines are kept (for tests).
    var count: Int { lock.withLock { entries.count } }

    /// Fires the deadlines that have passed; stops the timer when none is left.
    private func sweep(_ task: RepeatedTask) {
        let now = NIODeadline.now()
        let passed: [Entry] = lock.withLock {
            var passed: [Entry] = []
            for (id, entry) in entries where entry.deadline <= now {
                passed.append(entry)
                entries[id] = nil
            }
            if entries.isEmpty, timer === task {
                timer = nil
                task.cancel()
            }
            return passed
        }
        for entry in passed { entry.fire() }
    }
}
