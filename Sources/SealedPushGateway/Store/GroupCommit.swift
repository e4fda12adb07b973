import Foundation

/// Group commit: an item that arrives while a batch is being written waits for the next one, so items that come
/// together cost one store call (one SQLite transaction) instead of one each. Under light load a batch holds one
/// item and is written at once: no item waits for company. The delivery loop's job ends and the receipt endpoint's
/// records go through one each.
public final class GroupCommit<Item: Sendable, Answer: Sendable>: @unchecked Sendable {
    private typealias Waiter = (item: Item, continuation: CheckedContinuation<Answer, any Error>)

    private let maxBatch: Int
    private let metrics: GroupCommitMetrics?
    private let write: @Sendable ([Item]) async throws -> [Answer]
    private let lock = NSLock()
    private var pending: [Waiter] = []
    private var flushing = false

    /// - Parameters:
    ///   - maxBatch: The most items written together.
    ///   - metrics: Where each batch's size and write time are recorded; nil: nowhere.
    ///   - write: Writes a batch and answers each item, in order (a batch it throws for gets the error, each item).
    public init(
        maxBatch: Int, metrics: GroupCommitMetrics? = nil, write: @escaping @Sendable ([Item]) async throws -> [Answer]
    ) {
        self.maxBatch = max(1, maxBatch)
        self.metrics = metrics
        self.write = write
    }

    /// Writes one item with whatever others are waiting.
    /// - Returns: The item's answer.
    /// - Throws: The error of the batch it went in, or ``GatewayStoreError`` `database` when `write` answered fewer
    ///   items than it was given.
    public func submit(_ item: Item) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            let starts: Bool = lock.withLock {
                pending.append((item, continuation))
                guard !flushing else { return false }
                flushing = true
                return true
            }
            if starts { Task { await self.flush() } }
        }
    }

    /// Writes batches until nothing waits.
    private func flush() async {
        while true {
            let batch: [Waiter] = lock.withLock {
                guard !pending.isEmpty else {
                    flushing = false
                    return []
                }
                let taken = Array(pending.prefix(maxBatch))
                pending.removeFirst(taken.count)
                return taken
            }
            guard !batch.isEmpty else { return }
            let started = ContinuousClock.now
            let written: Result<[Answer], any Error>
            do { written = .success(try await write(batch.map(\.item))) } catch { written = .failure(error) }
            metrics?.record(items: batch.count, took: started.duration(to: .now))
            do {
                let answers = try written.get()
                guard answers.count == batch.count else {
                    throw GatewayStoreError(
                        .database, "a group write answered \(answers.count) of \(batch.count) items")
                }
                for (waiter, answer) in zip(batch, answers) { waiter.continuation.resume(returning: answer) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}
