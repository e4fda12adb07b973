import SealedPushCore

/// Why a request ended with the fallback placeholder instead of decrypted content.
public enum FallbackReason: String, Sendable, Hashable, CaseIterable {
    /// The key ring (or the replay state) could not be read: e.g. before first unlock, missing or corrupt.
    case keysUnavailable
    /// The envelope names a device key this device does not hold (e.g. pruned after rotation).
    case unknownKey
    /// The envelope names a server key that is not pinned.
    case unknownSender
    /// The envelope did not authenticate (any cryptographic failure).
    case authenticationFailure
    /// The envelope's `expiresAt` has passed.
    case expired
    /// The envelope's `issuedAt` is more than 10 minutes ahead of the device clock (a sender or device clock is
    /// wrong).
    case notYetValid
    /// The envelope was opened before.
    case replayed
    /// The payload, envelope or content is malformed or unsupported.
    case malformed
    /// Neither decryption nor failure came before the deadline or the system's expiry call.
    case timedOut
    /// A `remove` or `badge` control message (`Specs/control-v1.md` §2) reached a step configured without
    /// ``ControlConfiguration``, or applying it failed: nothing was changed, and its (empty) content is never shown.
    case controlNotApplied

    /// Maps a receive-path error to its fallback reason.
    ///
    /// - Parameter error: The error thrown while opening.
    public init(_ error: any Error) {
        guard let error = error as? SealedPushError else {
            self = .malformed
            return
        }
        switch error.code {
        case .keysUnavailable, .keyStoreCorrupt, .io: self = .keysUnavailable
        case .unknownRecipientKey: self = .unknownKey
        case .unknownSenderKey: self = .unknownSender
        case .authenticationFailure: self = .authenticationFailure
        case .expired: self = .expired
        case .notYetValid: self = .notYetValid
        case .replayed: self = .replayed
        default: self = .malformed
        }
    }
}

/// How a notification request ended: decrypted, a duplicate, or a fallback with its reason. Carries no plaintext.
public enum NotificationOutcome: Sendable, Hashable {
    /// The decrypted content was delivered (possibly as a best attempt at expiry).
    case decrypted
    /// The envelope was an exact duplicate of one opened moments ago (a sender's resend): its decrypted content was
    /// delivered again (``DuplicateHandling/deliverAgain``) or an empty content suppressed it
    /// (``DuplicateHandling/suppress``). Count it; the user saw no placeholder.
    case duplicate(DuplicateHandling)
    /// The fallback placeholder was delivered.
    case fallback(FallbackReason)
    /// A `remove` or `badge` control message (`Specs/control-v1.md` §2) was applied; the request showed nothing of
    /// its own (suppressed, or the configured quiet placeholder). An `update` is reported as ``decrypted``.
    case control(NotificationControl.Kind)
}

/// What a request delivers to its content handler: exactly once per request.
public struct NotificationDelivery: Sendable, Hashable {
    /// The content to show.
    public enum Content: Sendable, Hashable {
        /// The decrypted notification content.
        case decrypted(NotificationContent)
        /// The configured fallback placeholder (never contains plaintext).
        case placeholder(Placeholder)
        /// The request's own content unchanged (the sender's placeholder `aps` alert).
        case original
        /// Nothing to show: a duplicate suppressed (``DuplicateHandling/suppress``). Map it to an empty
        /// `UNNotificationContent()`, which iOS does not display when the extension has the notification-filtering
        /// entitlement.
        case suppressed
    }

    /// The content to show.
    public let content: Content
    /// The typed outcome (also given to the observer).
    public let outcome: NotificationOutcome
    /// Decrypted attachment files to attach (`UNNotificationAttachment`), in the sender's order.
    public let attachments: [DeliveredAttachment]
    /// The attachments (and the content reference) that did not make it, and why.
    public let attachmentFailures: [AttachmentFailure]
    /// For a fallback caused by an error, its exact code (``FallbackReason`` groups several codes under one
    /// reason); nil for timeouts, decrypted content and duplicates.
    public let errorCode: SealedPushError.Code?

    init(
        content: Content, outcome: NotificationOutcome, attachments: [DeliveredAttachment] = [],
        attachmentFailures: [AttachmentFailure] = [], errorCode: SealedPushError.Code? = nil
    ) {
        self.content = content
        self.outcome = outcome
        self.attachments = attachments
        self.attachmentFailures = attachmentFailures
        self.errorCode = errorCode
    }

    /// What an observer may see of this delivery: the outcome and the attachment results, no content.
    public var report: NotificationReport {
        NotificationReport(
            outcome: outcome, deliveredAttachments: attachments.count, thumbnails: attachments.filter(\.isThumbnail).count,
            attachmentFailures: attachmentFailures)
    }
}

/// A delivery as metrics see it: never content, never keys.
public struct NotificationReport: Sendable, Hashable {
    /// Decrypted, duplicate (and how it was handled) or fallback, with its reason.
    public let outcome: NotificationOutcome
    /// How many attachment files were delivered.
    public let deliveredAttachments: Int
    /// How many of them are thumbnails standing in for a file that did not arrive.
    public let thumbnails: Int
    /// What did not arrive, and why (an index, a code and a message without content).
    public let attachmentFailures: [AttachmentFailure]
}
