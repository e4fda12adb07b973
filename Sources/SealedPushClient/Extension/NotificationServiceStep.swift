#if canImport(FoundationEssentials)
import FoundationEssentials
import Dispatch
#else
import Foundation
#endif
import SealedPushCore

/// The notification service extension's work, without Apple frameworks: it mirrors
/// `UNNotificationServiceExtension` (`didReceive(_:withContentHandler:)` and `serviceExtensionTimeWillExpire()`).
///
/// Guarantees, per request:
/// - The content handler is called **exactly once**, whatever the interleaving of success, failure, the step's own
///   deadline and ``serviceExtensionTimeWillExpire()``, from any thread.
/// - The step's deadline (default 25 s, below the system's ~30 s) delivers even if the expiry call never comes.
/// - Best attempt: once the envelope is decrypted, that content is what expiry or the deadline delivers, even while
///   later work (``Configuration/enrich``) is still running; before that, the fallback placeholder.
/// - Every request ends in a ``NotificationOutcome`` given to ``Configuration/observer``. Nothing is logged.
/// - An exact duplicate of an envelope opened moments ago (a sender's resend, `Specs/keyring-v1.md` §5.5) never
///   shows the fallback: it is delivered again or suppressed, as ``Configuration/duplicates`` says, with outcome
///   ``NotificationOutcome/duplicate(_:)``. A replay of an old envelope still falls back with `replayed`.
///
/// The extension only reads keys: it never creates, rotates or rewrites them, and reports
/// ``FallbackReason/keysUnavailable`` when they cannot be read.
public final class NotificationServiceStep: Sendable {
    /// The step's settings.
    public struct Configuration: Sendable {
        /// The step's own deadline from `didReceive` to delivery. Default 25 seconds.
        public var deadline: Duration
        /// The placeholder shown on failure or timeout; nil keeps the request's own content (the sender's
        /// placeholder alert). It is fixed configuration and never derived from the envelope.
        public var fallbackPlaceholder: Placeholder?
        /// Receives every request's outcome once, after the content handler (for metrics). Never given plaintext.
        public var observer: (@Sendable (NotificationOutcome) -> Void)?
        /// Optional later work on decrypted content. Until it returns, the decrypted content is the best attempt; if
        /// it throws, the decrypted content is delivered. Runs after attachments, on the content they produced.
        public var enrich: (@Sendable (OpenedNotification) async throws -> NotificationContent)?
        /// Fetching attachments and content sent by reference; nil delivers the text alone (attachments ignored,
        /// the preview of a content reference shown).
        public var attachments: AttachmentConfiguration?
        /// Receives every request's report once, after the content handler: the outcome plus which attachments
        /// arrived and which did not, and why. Never given plaintext.
        public var reportObserver: (@Sendable (NotificationReport) -> Void)?
        /// What an exact duplicate delivers: the same content again (default) or nothing
        /// (``DuplicateHandling/suppress``, for extensions with the notification-filtering entitlement).
        public var duplicates: DuplicateHandling
        /// How control messages (`Specs/control-v1.md`) act on delivered notifications and what a `remove` or
        /// `badge` request shows; nil applies none (such a request then shows the fallback, never content).
        public var controls: ControlConfiguration?
        /// Seals and posts a receipt about each request (`Specs/control-v1.md` §4) after its content handler was
        /// called, within the step's deadline; what cannot be posted in time stays queued. nil sends none.
        public var receipts: ReceiptSender?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - deadline: The step's own deadline (default 25 s).
        ///   - fallbackPlaceholder: The fallback placeholder, or nil to keep the request's content.
        ///   - observer: The outcome observer.
        ///   - enrich: Optional later work on decrypted content.
        ///   - attachments: Attachment and content-reference fetching, or nil for text only.
        ///   - reportObserver: The report observer.
        ///   - duplicates: What an exact duplicate delivers (default: the same content again).
        ///   - controls: How control messages are applied, or nil for none.
        ///   - receipts: Receipts to the backend after each request, or nil for none.
        public init(
            deadline: Duration = .seconds(25),
            fallbackPlaceholder: Placeholder? = nil,
            observer: (@Sendable (NotificationOutcome) -> Void)? = nil,
            enrich: (@Sendable (OpenedNotification) async throws -> NotificationContent)? = nil,
            attachments: AttachmentConfiguration? = nil,
            reportObserver: (@Sendable (NotificationReport) -> Void)? = nil,
            duplicates: DuplicateHandling = .deliverAgain,
            controls: ControlConfiguration? = nil,
            receipts: ReceiptSender? = nil
        ) {
            self.receipts = receipts
            self.deadline = deadline
            self.fallbackPlaceholder = fallbackPlaceholder
            self.observer = observer
            self.enrich = enrich
            self.attachments = attachments
            self.reportObserver = reportObserver
            self.duplicates = duplicates
            self.controls = controls
        }
    }

    /// The step's settings.
    public let configuration: Configuration
    private let open: @Sendable ([UInt8]) throws -> OpenedNotification
    private let registry = Registry()

    /// Creates a step that opens requests with `receiver` (read-only key ring + replay guard).
    ///
    /// - Parameters:
    ///   - receiver: The receive path.
    ///   - configuration: Deadline, fallback, observer and optional later work.
    public convenience init(receiver: SealedPushReceiver, configuration: Configuration = Configuration()) {
        self.init(configuration: configuration) { envelope in try receiver.open(envelope: envelope) }
    }

    init(configuration: Configuration, open: @escaping @Sendable ([UInt8]) throws -> OpenedNotification) {
        self.configuration = configuration
        self.open = open
    }

    /// Starts processing a request; returns at once. `contentHandler` is called exactly once, on some thread.
    ///
    /// - Parameters:
    ///   - request: The notification request.
    ///   - contentHandler: Receives the content to show and the outcome.
    public func didReceive(
        _ request: NotificationRequest,
        withContentHandler contentHandler: @escaping @Sendable (NotificationDelivery) -> Void
    ) {
        let fallback: NotificationDelivery.Content = configuration.fallbackPlaceholder.map { .placeholder($0) } ?? .original
        let registry = self.registry
        let id = registry.nextID()
        let requestDeadline = ContinuousClock.now.advanced(by: configuration.deadline)
        var report = configuration.reportObserver
        if let receipts = configuration.receipts, case .success(let envelope) = request.envelope {
            // After the content handler (the gate reports after it): the notification never waits for a receipt.
            let observer = report
            report = { outcome in
                observer?(outcome)
                Task.detached { _ = await receipts.send(about: envelope, report: outcome, deadline: requestDeadline) }
            }
        }
        let gate = CompletionGate(
            fallback: fallback,
            observer: configuration.observer,
            onFinish: { registry.remove(id) },
            report: report,
            handler: contentHandler
        )
        registry.insert(gate, id: id)

        let deadline = configuration.deadline
        gate.attach(Task.detached {
            do {
                try await Task.sleep(for: deadline)
            } catch {
                return  // cancelled: the request finished first
            }
            gate.timeOut()
        })

        let open = self.open
        let enrich = configuration.enrich
        let duplicates = configuration.duplicates
        let controls = configuration.controls
        let pipeline = configuration.attachments.map(AttachmentPipeline.init)
        // Opening does blocking file I/O (key ring read, replay guard flock): keep it off the Swift concurrency pool.
        DispatchQueue.global(qos: .userInitiated).async {
            guard !gate.isFinished else { return }
            var received: OpenedNotification
            do {
                received = try open(try request.envelope.get())
            } catch {
                gate.fail(FallbackReason(error), code: (error as? SealedPushError)?.code)
                return
            }
            if let control = received.content.control {
                // Control messages (control-v1 §2.1): a remove or badge shows nothing of its own; an update shows its
                // content. A duplicate is never applied twice.
                let silent = control.kind != .update
                if silent {
                    let shown = controls?.deliveryContent ?? fallback
                    if received.isDuplicate {
                        gate.finishControl(duplicates == .suppress ? .suppressed : shown, outcome: .duplicate(duplicates))
                        return
                    }
                    guard let controls else {
                        gate.fail(.controlNotApplied)  // cannot apply: never show it as content
                        return
                    }
                    gate.attach(Task.detached {
                        do {
                            try await controls.apply(control, requestIdentifier: request.identifier)
                            gate.finishControl(shown, outcome: .control(control.kind))
                        } catch {
                            gate.fail(.controlNotApplied, code: (error as? SealedPushError)?.code)
                        }
                    })
                    return
                }
            }
            var update: NotificationControl?
            if let control = received.content.control, case .update(let id) = control.action {
                // An update shows its content as notification `id` (its userInfo id), without the control member.
                var content = received.content
                content.control = nil
                content.notificationID = id
                received = received.replacingContent(content)
                update = control
            }
            let opened = received
            if let control = update, !opened.isDuplicate, let controls {
                // An older copy shown under another request id goes first (a local call), then the content.
                gate.attach(Task.detached {
                    try? await controls.apply(control, requestIdentifier: request.identifier)
                    Self.deliver(opened, gate: gate, duplicates: duplicates, pipeline: pipeline, enrich: enrich,
                                 requestDeadline: requestDeadline)
                })
                return
            }
            Self.deliver(opened, gate: gate, duplicates: duplicates, pipeline: pipeline, enrich: enrich,
                         requestDeadline: requestDeadline)
        }
    }

    /// Delivers opened content (a first opening or a duplicate delivered again): the text at once, or as the best
    /// attempt while attachments, a content reference and later work complete.
    private static func deliver(
        _ opened: OpenedNotification, gate: CompletionGate, duplicates: DuplicateHandling,
        pipeline: AttachmentPipeline?, enrich: (@Sendable (OpenedNotification) async throws -> NotificationContent)?,
        requestDeadline: ContinuousClock.Instant
    ) {
        if opened.isDuplicate, duplicates == .suppress {
            gate.suppressDuplicate()
            return
        }
        let outcome: NotificationOutcome = opened.isDuplicate ? .duplicate(.deliverAgain) : .decrypted
        let needsAttachments = pipeline.map {
            !$0.plannedIndexes(for: opened.content).isEmpty
                || ($0.configuration.fetchesContentReferences && opened.content.contentReference != nil)
        } ?? false
        guard enrich != nil || needsAttachments else {
            gate.succeed(opened.content, outcome: outcome)
            return
        }
        // The text (or a reference's preview) is the best attempt while files and the full content arrive.
        gate.recordBestAttempt(
            opened.content, pendingAttachments: pipeline?.plannedIndexes(for: opened.content) ?? [],
            outcome: outcome)
        gate.attach(Task.detached {
            var fetched = AttachmentPipeline.Outcome(content: opened.content)
            if needsAttachments, let pipeline {
                fetched = await pipeline.run(
                    opened.content, deadline: requestDeadline, messageID: opened.messageID,
                    isDuplicate: opened.isDuplicate)
            }
            if let enrich {
                let input = opened.replacingContent(fetched.content)
                fetched.content = (try? await enrich(input)) ?? fetched.content
            }
            if !gate.succeed(
                fetched.content, attachments: fetched.delivered, failures: fetched.failures, outcome: outcome)
            {
                // Expiry or the deadline delivered first: the files are not shown, so they must not stay.
                fetched.removeFiles()
            }
        })
    }

    /// The system's "time will expire" call: every pending request delivers its best attempt now (decrypted content
    /// if available, else the fallback with ``FallbackReason/timedOut``).
    public func serviceExtensionTimeWillExpire() {
        for gate in registry.snapshot() {
            gate.timeOut()
        }
    }

    /// Pending requests by id.
    private final class Registry: @unchecked Sendable {
        private let lock = ClientLock()
        private var counter: UInt64 = 0
        private var gates: [UInt64: CompletionGate] = [:]

        func nextID() -> UInt64 {
            lock.withLock {
                counter &+= 1
                return counter
            }
        }

        func insert(_ gate: CompletionGate, id: UInt64) {
            lock.withLock {
                // A request can finish before it is registered only if its handler ran already; then skip it.
                if !gate.isFinished { gates[id] = gate }
            }
        }

        func remove(_ id: UInt64) {
            lock.withLock { _ = gates.removeValue(forKey: id) }
        }

        func snapshot() -> [CompletionGate] {
            lock.withLock { Array(gates.values) }
        }
    }
}
