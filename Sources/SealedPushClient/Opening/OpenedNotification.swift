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

    /// Creates an opened notification.
    ///
    /// - Parameters:
    ///   - content: The content.
    ///   - messageID: The 16-byte message id.
    ///   - issuedAt: Issue time, UNIX seconds.
    ///   - expiresAt: Expiry time, UNIX seconds.
    ///   - recipientKeyID: The device key id.
    ///   - senderKeyID: The server key id.
    public init(
        content: NotificationContent,
        messageID: [UInt8],
        issuedAt: UInt64,
        expiresAt: UInt64,
        recipientKeyID: KeyID,
        senderKeyID: KeyID
    ) {
        self.content = content
        self.messageID = messageID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.recipientKeyID = recipientKeyID
        self.senderKeyID = senderKeyID
    }
}
