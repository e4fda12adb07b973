#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A receipt that opened at the gateway, to record against the job it is about (`Specs/control-v1.md` §4).
///
/// Only the fields the contract names reach the store: the outcome and its reason code, the attachment counts and
/// the device time. The receipt's own id is kept until its expiry so it opens once.
public struct ReceivedReceipt: Sendable, Hashable {
    /// The most receipts a job takes: its first, and later ones about the same notification (a resend's duplicate,
    /// a device's retry under a new receipt id). Past it, a receipt changes nothing and its id is not kept, so a
    /// device posting receipts cannot grow the store beyond this many per notification it was sent.
    public static let maxPerJob = 8

    /// The app it was posted for.
    public var appID: String
    /// The id of the registered device key that sealed it (lowercase hex): the job must have been sealed to it
    /// (whichever device of the app it was sent to: a key id names one key, and the job names its device).
    public var keyID: String
    /// The receipt's own id (lowercase hex of its envelope `messageId`).
    public var receiptID: String
    /// Until when the receipt could be presented again (its envelope `expiresAt`).
    public var receiptExpiresAt: Date
    /// The envelope the receipt is about (lowercase hex of its `messageId`).
    public var messageID: String
    /// `decrypted`, `duplicate` or `fallback`.
    public var outcome: String
    /// With `fallback`: the reason code.
    public var reason: String?
    /// Attachment files delivered.
    public var attachmentsDelivered: Int
    /// Attachment files not delivered.
    public var attachmentsFailed: Int
    /// When the device decided.
    public var deviceTime: Date
    /// When the gateway received it.
    public var receivedAt: Date
    /// Whether the store writes a ``ReceiptEvent`` to the webhook's outbox, in the same transaction, when this is its
    /// job's first receipt.
    public var forwardsToWebhook: Bool

    /// Creates a record.
    public init(
        appID: String, keyID: String, receiptID: String, receiptExpiresAt: Date, messageID: String,
        outcome: String, reason: String?, attachmentsDelivered: Int, attachmentsFailed: Int, deviceTime: Date,
        receivedAt: Date, forwardsToWebhook: Bool = false
    ) {
        self.appID = appID
        self.keyID = keyID
        self.receiptID = receiptID
        self.receiptExpiresAt = receiptExpiresAt
        self.messageID = messageID
        self.outcome = outcome
        self.reason = reason
        self.attachmentsDelivered = attachmentsDelivered
        self.attachmentsFailed = attachmentsFailed
        self.deviceTime = deviceTime
        self.receivedAt = receivedAt
        self.forwardsToWebhook = forwardsToWebhook
    }
}
