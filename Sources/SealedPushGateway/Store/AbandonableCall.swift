import Foundation

/// Runs one database operation with a deadline, and returns at the deadline or on cancellation even when the
/// operation itself does not respond to cancellation (a query on a connection the server dropped, a lease waiting
/// for a pool that keeps failing to connect). The abandoned operation is cancelled and left to end on its own; its
/// late result is dropped.
///
/// Without it, one store call stuck in the driver keeps a delivery slot forever and stops a graceful shutdown. The
/// PostgreSQL store runs every call through it, and so does the HTTP API's every store call.
///
/// The deadline is kept by ``CallDeadlines`` (one repeating timer for every call in flight; removed, it is gone at
/// once), not a sleeping `Task`: on this platform's runtime a cancelled `Task.sleep` kept its task allocated for good
/// — about 170 bytes per store call, which grew the gateway's RSS by about 5 MB per 100,000 deliveries on
/// PostgreSQL. It fires up to one tick (20 ms) after its instant.
public final class AbandonableCall<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var outcome: Result<T, any Error>?
    private var work: Task<Void, Never>?
    private var deadlineID: UInt64?

    private let deadlines: CallDeadlines

    private init(deadlines: CallDeadlines) {
        self.deadlines = deadlines
    }

    /// Runs `operation`; throws `timeoutError()` once `deadline` has passed, `CancellationError` once the calling
    /// task is cancelled, whichever comes first, unless the operation ended before.
    public static func run(
        deadline: Duration, timeoutError: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await run(deadline: deadline, in: .shared, timeoutError: timeoutError, operation)
    }

    /// ``run(deadline:timeoutError:_:)`` with its deadline kept by `deadlines` (tests use their own).
    static func run(
        deadline: Duration, in deadlines: CallDeadlines, timeoutError: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let call = AbandonableCall<T>(deadlines: deadlines)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                call.start(continuation, deadline: deadline, timeoutError: timeoutError, operation)
            }
        } onCancel: {
            call.complete(.failure(CancellationError()))
        }
    }

    private func start(
        _ continuation: CheckedContinuation<T, any Error>, deadline: Duration,
        timeoutError: @escaping @Sendable () -> any Error, _ operation: @escaping @Sendable () async throws -> T
    ) {
        let alreadyDone: Result<T, any Error>? = lock.withLock {
            if let outcome { return outcome }  // cancelled before it started
            self.continuation = continuation
            return nil
        }
        if let alreadyDone {
            continuation.resume(with: alreadyDone)
            return
        }
        let work = Task {
            do { self.complete(.success(try await operation())) } catch { self.complete(.failure(error)) }
        }
        let deadlineID = deadlines.add(in: deadline) { self.complete(.failure(timeoutError())) }
        let cancelNow = lock.withLock {
            guard outcome == nil else { return true }
            self.work = work
            self.deadlineID = deadlineID
            return false
        }
        if cancelNow {
            work.cancel()
            deadlines.remove(deadlineID)
        }
    }

    /// Ends the call with `result` unless it has ended already.
    private func complete(_ result: Result<T, any Error>) {
        let (continuation, work, deadlineID) = lock.withLock {
            () -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?, UInt64?) in
            guard outcome == nil else { return (nil, nil, nil) }
            outcome = result
            defer {
                self.continuation = nil
                self.work = nil
                self.deadlineID = nil
            }
            return (self.continuation, self.work, self.deadlineID)
        }
        work?.cancel()
        if let deadlineID { deadlines.remove(deadlineID) }
        continuation?.resume(with: result)
    }
}
