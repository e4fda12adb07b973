import Foundation
import NIOCore
import NIOPosix

/// Runs one database operation with a deadline, and returns at the deadline or on cancellation even when the
/// operation itself does not respond to cancellation (a query on a connection the server dropped, a lease waiting
/// for a pool that keeps failing to connect). The abandoned operation is cancelled and left to end on its own; its
/// late result is dropped.
///
/// Without it, one store call stuck in the driver keeps a delivery slot forever and stops a graceful shutdown. The
/// PostgreSQL store runs every call through it, and so does the HTTP API's every store call.
///
/// The deadline is a NIO scheduled task (cancelled, it leaves the event loop's timer queue at once), not a sleeping
/// `Task`: on this platform's runtime a cancelled `Task.sleep` kept its task allocated for good — about 170 bytes per
/// store call, which grew the gateway's RSS by about 5 MB per 100,000 deliveries on PostgreSQL.
public final class AbandonableCall<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var outcome: Result<T, any Error>?
    private var work: Task<Void, Never>?
    private var timer: Scheduled<Void>?

    private init() {}

    /// Runs `operation`; throws `timeoutError()` once `deadline` has passed, `CancellationError` once the calling
    /// task is cancelled, whichever comes first, unless the operation ended before.
    public static func run(
        deadline: Duration, timeoutError: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let call = AbandonableCall<T>()
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
        let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(deadline)) {
            self.complete(.failure(timeoutError()))
        }
        let cancelNow = lock.withLock {
            guard outcome == nil else { return true }
            self.work = work
            self.timer = timer
            return false
        }
        if cancelNow {
            work.cancel()
            timer.cancel()
        }
    }

    /// Ends the call with `result` unless it has ended already.
    private func complete(_ result: Result<T, any Error>) {
        let (continuation, work, timer) = lock.withLock {
            () -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?, Scheduled<Void>?) in
            guard outcome == nil else { return (nil, nil, nil) }
            outcome = result
            defer {
                self.continuation = nil
                self.work = nil
                self.timer = nil
            }
            return (self.continuation, self.work, self.timer)
        }
        work?.cancel()
        timer?.cancel()
        continuation?.resume(with: result)
    }
}
