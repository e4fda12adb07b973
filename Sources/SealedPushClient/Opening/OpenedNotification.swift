import SealedPushCore

/// The result of opening an envelope: the authenticated content and the authenticated header fields.
public struct OpenedNotification: Sendable, Hashable {
    /// The notification content (spec §4).
    public let content: NotificationContent
    /// The envelope's 16-byte message id.
    public let messageID: [UInt8]
    /// When the sender sealed the envelope, UNIX seconds.
    public let issuedAt: UInt64
    /// When the envelope stops opening, UNIX seconds.
    public let expiresAt: UInt64
    /// The id of the device key that opened the envelope.
    public let recipientKeyID: KeyID
    /// The id of the pinned server key that authenticated the sender.
    public let senderKeyID: KeyID
    /// What the replay guard decided (``SealedPushReceiver`` with a guard), or nil when no guard was asked.
    /// ``ReplayVerdict/duplicate(firstAcceptedAt:)`` means this is an exact copy of an envelope opened moments ago
    /// (a sender's resend): show the same content again or suppress it, never a placeholder.
    public let replayVerdict: ReplayVerdict?

    /// Whether the replay guard found this envelope an exact duplicate of one it accepted within its window.
    public var isDuplicate: Bool {
        if case .duplicate = replayVerdict { return true }
        return false
    }

    /// Creates an opened notification.
    ///
    /// - Parameters:
    ///   - content: The content.
    ///   - messageID: The 16-byte message id.
    ///   - issuedAt: Issue time, UNIX seconds.
    ///   - expiresAt: Expiry time, UNIX seconds.
    ///   - recipientKeyID: The device key id.
    ///   - senderKeyID: The server key id.
    ///   - replayVerdict: The replay guard's verdict, or nil when none was asked.
    public init(
        content: NotificationContent,
        messageID: [UInt8],
        issuedAt: UInt64,
        expiresAt: UInt64,
        recipientKeyID: KeyID,
        senderKeyID: KeyID,
        replayVerdict: ReplayVerdict? = nil
    ) {
        self.content = content
        self.messageID = messageID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.recipientKeyID = recipientKeyID
        self.senderKeyID = senderKeyID
        self.replayVerdict = replayVerdict
    }

    /// This notification with `content` in place of its own (the step's later work), everything else kept.
    func replacingContent(_ content: NotificationContent) -> OpenedNotification {
        OpenedNotification(
            content: content, messageID: messageID, issuedAt: issuedAt, expiresAt: expiresAt,
            recipientKeyID: recipientKeyID, senderKeyID: senderKeyID, replayVerdict: replayVerdict)
    }
}
