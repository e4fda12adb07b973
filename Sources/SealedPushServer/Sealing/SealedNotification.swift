import SealedPushCore

/// One sealed notification: the exact APNs JSON body to send and the facts a sender needs about it.
public struct SealedNotification: Sendable, Hashable {
    /// The exact APNs JSON body (spec §6), at most 4,096 bytes.
    public let payload: [UInt8]
    /// The binary envelope (spec §3) carried base64url-encoded in the body's `sp` member.
    public let envelope: [UInt8]
    /// The envelope's random 16-byte message id.
    public let messageID: [UInt8]
    /// When the envelope was issued (UNIX seconds).
    public let issuedAt: UInt64
    /// When the envelope expires (UNIX seconds); a natural value for `apns-expiration`.
    public let expiresAt: UInt64
    /// The key id of the device key it was sealed to.
    public let recipientKeyID: KeyID
    /// The key id of the server identity that sealed it.
    public let senderKeyID: KeyID
}
