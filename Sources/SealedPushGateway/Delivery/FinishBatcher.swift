import Foundation

/// Group commit for the delivery loop's job ends: an end that arrives while a batch is being written waits for
/// the next one, so sends that finish together cost one store call (one SQLite transaction) instead of one each.
/// Under light load a batch holds one end and is written at once: no end waits for company.
final class FinishBatcher: @unchecked Sendable {
    private typealias Waiter = (end: JobFinish, continuation: CheckedContinuation<Bool, any Error>)

    private let store: any GatewayStore
    private let maxBatch: Int
    private let lock = NSLock()
    private var pending: [Waiter] = []
    private var flushing = false

    /// - Parameters:
    ///   - store: Where the ends are written (``GatewayStore/finish(_:)``).
    ///   - maxBatch: The most ends written together.
    init(store: any GatewayStore, maxBatch: Int) {
        self.store = store
        self.maxBatch = max(1, maxBatch)
    }

    /// Writes one job's end with whatever others are waiting.
    /// - Returns: Whether the job's owner still held it.
    /// - Throws: The store's error for the batch it went in (nothing of that batch was written, on SQLite).
    func finish(_ end: JobFinish) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            let starts: Bool = lock.withLock {
                pending.append((end, continuation))
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
            do {
                let held = try await store.finish(batch.map(\.end))
                for (index, waiter) in batch.enumerated() {
                    waiter.continuation.resume(returning: index < held.count ? held[index] : false)
                }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}
