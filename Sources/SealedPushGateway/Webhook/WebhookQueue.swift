import Foundation
import NIOCore
import NIOPosix

/// The webhook's events held in memory: waiting to be posted, waiting for a retry, or being posted — at most
/// `limit` in all (with a ``WebhookOutbox``, the events the node holds at once: the rest wait in the store). Workers
/// (``UnregisteredWebhook/run()``) take events with ``next()`` and report each with ``done(_:)`` or
/// ``retry(_:after:)``; an event waiting for its retry holds no worker.
///
/// After ``close()`` no event is added, events waiting for a retry are tried at once and further retries wait at
/// most ``drainPause``; ``next()`` returns nil once nothing is held (or its task is cancelled). What is still held
/// when the workers are gone (a cancelled drain) is ``takeRemaining()``.
final class WebhookQueue: @unchecked Sendable {
    /// One event and its delivery so far.
    struct Item: Sendable {
        let sequence: UInt64
        let event: any WebhookEvent
        /// The `SealedPush-Delivery` id, the same on every attempt.
        let deliveryID: String
        /// Attempts made so far.
        var attempts: Int
    }

    /// The longest wait before a retry once closed.
    static let drainPause: Duration = .milliseconds(250)

    private let lock = NSLock()
    private let limit: Int
    private var ready: [Item] = []
    private var readyHead = 0
    private var delayed: [UInt64: (item: Item, timer: Scheduled<Void>?)] = [:]
    private var inFlight: [UInt64: Item] = [:]
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Item?, Never>)] = []
    private var cancelledWaiters: Set<UInt64> = []
    private var nextSequence: UInt64 = 0
    private var closed = false

    /// A queue holding at most `limit` events.
    init(limit: Int) {
        self.limit = limit
    }

    /// Events held (waiting, waiting for a retry, being posted).
    var count: Int { lock.withLock { heldCount } }

    /// Whether ``close()`` was called.
    var isClosed: Bool { lock.withLock { closed } }

    /// How many more events ``add(_:deliveryID:attempts:)`` takes now: none once closed.
    var room: Int { lock.withLock { closed ? 0 : max(0, limit - heldCount) } }

    private var heldCount: Int { ready.count - readyHead + delayed.count + inFlight.count }

    /// Why ``add(_:deliveryID:)`` refused an event.
    enum Refusal: Error {
        case full
        case closed
    }

    /// Holds an event.
    /// - Parameters:
    ///   - event: The event.
    ///   - deliveryID: Its `SealedPush-Delivery` id.
    ///   - attempts: The attempts made before (by an earlier holder of an outbox event).
    /// - Returns: The number of events now held, or ``Refusal`` when `limit` events are held or the queue is closed.
    func add(_ event: any WebhookEvent, deliveryID: String, attempts: Int = 0) -> Result<Int, Refusal> {
        let outcome: Result<(CheckedContinuation<Item?, Never>?, Item, Int), Refusal> = lock.withLock {
            guard !closed else { return .failure(.closed) }
            guard heldCount < limit else { return .failure(.full) }
            nextSequence &+= 1
            let item = Item(sequence: nextSequence, event: event, deliveryID: deliveryID, attempts: attempts)
            if waiters.isEmpty {
                ready.append(item)
                return .success((nil, item, heldCount))
            }
            inFlight[item.sequence] = item
            return .success((waiters.removeFirst().continuation, item, heldCount))
        }
        return outcome.map { waiter, item, held in
            waiter?.resume(returning: item)
            return held
        }
    }

    /// The next event to post (now being posted), waiting for one; nil once closed and nothing is held, or when the
    /// calling task is cancelled.
    func next() async -> Item? {
        let id: UInt64 = lock.withLock {
            nextSequence &+= 1
            return nextSequence
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Item?, Never>) in
                let answer: Item?? = lock.withLock {
                    if cancelledWaiters.remove(id) != nil { return .some(nil) }
                    if let item = popReady() {
                        inFlight[item.sequence] = item
                        return .some(item)
                    }
                    if closed, heldCount == 0 { return .some(nil) }
                    waiters.append((id, continuation))
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Item?, Never>? = lock.withLock {
                if let index = waiters.firstIndex(where: { $0.id == id }) {
                    return waiters.remove(at: index).continuation
                }
                cancelledWaiters.insert(id)
                return nil
            }
            waiter?.resume(returning: nil)
        }
    }

    /// The event was delivered or given up: no longer held.
    func done(_ item: Item) {
        let finished = lock.withLock {
            inFlight[item.sequence] = nil
            return takeWaitersIfFinished()
        }
        for waiter in finished { waiter.resume(returning: nil) }
    }

    /// The event is to be tried again after `delay` (at most ``drainPause`` once closed).
    func retry(_ item: Item, after delay: Duration) {
        let wait = lock.withLock {
            inFlight[item.sequence] = nil
            delayed[item.sequence] = (item, nil)
            return closed ? min(delay, Self.drainPause) : delay
        }
        let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(wait)) { [self] in
            wake(item.sequence)
        }
        let fired = lock.withLock {
            guard delayed[item.sequence] != nil else { return true }
            delayed[item.sequence]?.timer = timer
            return false
        }
        if fired { timer.cancel() }
    }

    /// Accepts no more events; events waiting for a retry are tried now.
    func close() {
        let (woken, finished): ([(CheckedContinuation<Item?, Never>, Item)], [CheckedContinuation<Item?, Never>]) =
            lock.withLock {
                closed = true
                for (_, entry) in delayed.sorted(by: { $0.key < $1.key }) {
                    entry.timer?.cancel()
                    ready.append(entry.item)
                }
                delayed = [:]
                var woken: [(CheckedContinuation<Item?, Never>, Item)] = []
                while !waiters.isEmpty, let item = popReady() {
                    inFlight[item.sequence] = item
                    woken.append((waiters.removeFirst().continuation, item))
                }
                return (woken, takeWaitersIfFinished())
            }
        for (waiter, item) in woken { waiter.resume(returning: item) }
        for waiter in finished { waiter.resume(returning: nil) }
    }

    /// Everything still held (the workers are gone), in the order events came; the queue is empty afterwards.
    func takeRemaining() -> [Item] {
        lock.withLock {
            var all = Array(ready[readyHead...]) + delayed.values.map(\.item) + inFlight.values
            for entry in delayed.values { entry.timer?.cancel() }
            ready = []
            readyHead = 0
            delayed = [:]
            inFlight = [:]
            all.sort { $0.sequence < $1.sequence }
            return all
        }
    }

    private func wake(_ sequence: UInt64) {
        let handOver: (CheckedContinuation<Item?, Never>, Item)? = lock.withLock {
            guard let entry = delayed.removeValue(forKey: sequence) else { return nil }
            if waiters.isEmpty {
                ready.append(entry.item)
                return nil
            }
            inFlight[sequence] = entry.item
            return (waiters.removeFirst().continuation, entry.item)
        }
        if let (waiter, item) = handOver { waiter.resume(returning: item) }
    }

    /// Under the lock.
    private func popReady() -> Item? {
        guard readyHead < ready.count else { return nil }
        let item = ready[readyHead]
        readyHead += 1
        if readyHead >= 1024, readyHead * 2 >= ready.count {
            ready.removeFirst(readyHead)
            readyHead = 0
        } else if readyHead == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyHead = 0
        }
        return item
    }

    /// Under the lock: every waiter, when closed and nothing is held.
    private func takeWaitersIfFinished() -> [CheckedContinuation<Item?, Never>] {
        guard closed, heldCount == 0 else { return [] }
        defer { waiters = [] }
        return waiters.map(\.continuation)
    }
}
