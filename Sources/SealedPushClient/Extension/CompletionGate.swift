#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// The exactly-once state machine behind one notification request.
///
/// States: `pending(best: nil)` → `pending(best: content)` (decrypted, later work still running) → `finished`.
/// The best attempt keeps the outcome it will be reported with (`decrypted`, or `duplicate` for a resend).
/// Every event — success, failure, the step's own deadline, the system's expiry call — tries the single
/// `pending → finished` transition under a lock; exactly one wins and calls the handler, outside the lock, once.
/// Events after that are ignored. Safe from any thread.
final class CompletionGate: @unchecked Sendable {
    typealias Handler = @Sendable (NotificationDelivery) -> Void

    private enum State {
        case pending(best: NotificationContent?)
        case finished
    }

    /// Attachments still being fetched when the best attempt was recorded: reported as `deadlineExceeded` if the
    /// request finishes before them.
    private var pendingAttachments: [Int] = []
    /// The outcome the best attempt is delivered with.
    private var bestOutcome = NotificationOutcome.decrypted
    private var report: (@Sendable (NotificationReport) -> Void)?

    private let lock = ClientLock()
    private var state = State.pending(best: nil)
    private var handler: Handler?
    private var observer: (@Sendable (NotificationOutcome) -> Void)?
    private var onFinish: (@Sendable () -> Void)?
    private var tasks: [Task<Void, Never>] = []
    private let fallback: NotificationDelivery.Content

    /// - Parameters:
    ///   - fallback: The placeholder to deliver on failure or timeout (`.placeholder` or `.original`).
    ///   - observer: Receives the outcome once, after the handler.
    ///   - onFinish: Runs once after the handler (the step unregisters the request here).
    ///   - handler: The content handler, called exactly once.
    init(
        fallback: NotificationDelivery.Content,
        observer: (@Sendable (NotificationOutcome) -> Void)?,
        onFinish: (@Sendable () -> Void)? = nil,
        report: (@Sendable (NotificationReport) -> Void)? = nil,
        handler: @escaping Handler
    ) {
        self.fallback = fallback
        self.observer = observer
        self.report = report
        self.onFinish = onFinish
        self.handler = handler
    }

    /// Whether the handler has been called.
    var isFinished: Bool {
        lock.withLock {
            if case .finished = state { return true }
            return false
        }
    }

    /// Ties tasks to the request: they are cancelled when it finishes (at once if it already has).
    func attach(_ task: Task<Void, Never>) {
        let finished: Bool = lock.withLock {
            if case .finished = state { return true }
            tasks.append(task)
            return false
        }
        if finished { task.cancel() }
    }

    /// Records decrypted content as the best attempt that expiry or the deadline will deliver.
    /// - Returns: false if the request had already finished.
    /// - Parameters:
    ///   - content: The decrypted content.
    ///   - pendingAttachments: Indexes of attachments still being fetched.
    ///   - outcome: The outcome to report if the best attempt is delivered (`decrypted` or `duplicate`).
    @discardableResult
    func recordBestAttempt(
        _ content: NotificationContent, pendingAttachments: [Int] = [], outcome: NotificationOutcome = .decrypted
    ) -> Bool {
        lock.withLock {
            guard case .pending = state else { return false }
            state = .pending(best: content)
            self.pendingAttachments = pendingAttachments
            bestOutcome = outcome
            return true
        }
    }

    /// Finishes with decrypted content, reported as `outcome` (`decrypted`, or `duplicate` for a resend delivered
    /// again). - Returns: whether this call delivered.
    @discardableResult
    func succeed(
        _ content: NotificationContent, attachments: [DeliveredAttachment] = [], failures: [AttachmentFailure] = [],
        outcome: NotificationOutcome = .decrypted
    ) -> Bool {
        finish { _ in
            NotificationDelivery(
                content: .decrypted(content), outcome: outcome, attachments: attachments, attachmentFailures: failures)
        }
    }

    /// Finishes a `remove` or `badge` control message with what the configuration shows for it (nothing, or the
    /// quiet placeholder), reported as `outcome`. - Returns: whether this call delivered.
    @discardableResult
    func finishControl(_ content: NotificationDelivery.Content, outcome: NotificationOutcome) -> Bool {
        finish { _ in NotificationDelivery(content: content, outcome: outcome) }
    }

    /// Finishes with nothing to show: a duplicate suppressed. - Returns: whether this call delivered.
    @discardableResult
    func suppressDuplicate() -> Bool {
        finish { _ in NotificationDelivery(content: .suppressed, outcome: .duplicate(.suppress)) }
    }

    /// Finishes with the fallback (or the best attempt, if one was recorded). - Returns: whether this call delivered.
    @discardableResult
    func fail(_ reason: FallbackReason, code: SealedPushError.Code? = nil) -> Bool {
        finish { best in self.delivery(best: best, reason: reason, code: code) }
    }

    /// The deadline or the expiry call: delivers the best attempt, or the fallback with `timedOut`.
    /// - Returns: whether this call delivered.
    @discardableResult
    func timeOut() -> Bool {
        finish { best in self.delivery(best: best, reason: .timedOut) }
    }

    private func delivery(
        best: NotificationContent?, reason: FallbackReason, code: SealedPushError.Code? = nil
    ) -> NotificationDelivery {
        if let best {
            let missing = pendingAttachments.map {
                AttachmentFailure(index: $0, code: .deadlineExceeded,
                                  message: "the extension's time ran out before the attachment was ready")
            }
            return NotificationDelivery(content: .decrypted(best), outcome: bestOutcome, attachmentFailures: missing)
        }
        return NotificationDelivery(content: fallback, outcome: .fallback(reason), errorCode: code)
    }

    private func finish(_ makeDelivery: (NotificationContent?) -> NotificationDelivery) -> Bool {
        let taken: (Handler, NotificationDelivery, (@Sendable (NotificationOutcome) -> Void)?, (@Sendable () -> Void)?,
            [Task<Void, Never>], (@Sendable (NotificationReport) -> Void)?)? = lock.withLock {
            guard case .pending(let best) = state, let handler else { return nil }
            let delivery = makeDelivery(best)
            let result = (handler, delivery, observer, onFinish, tasks, report)
            state = .finished
            self.handler = nil
            observer = nil
            onFinish = nil
            report = nil
            tasks = []
            return result
        }
        guard let (handler, delivery, observer, onFinish, tasks, report) = taken else { return false }
        handler(delivery)
        observer?(delivery.outcome)
        report?(delivery.report)
        for task in tasks { task.cancel() }
        onFinish?()
        return true
    }
}
