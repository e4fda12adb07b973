#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The first receipt a device sent about a job, as the status shows it.
public struct JobReceipt: Sendable, Hashable {
    /// `decrypted`, `duplicate` or `fallback`.
    public var outcome: String
    /// With `fallback`: the reason code.
    public var reason: String?
    /// Attachment files delivered.
    public var attachmentsDelivered: Int
    /// Attachment files not delivered.
    public var attachmentsFailed: Int
    /// When the device decided (its clock).
    public var deviceTime: Date
    /// When the gateway received the first receipt.
    public var receivedAt: Date
    /// Receipts received for the job (later ones are counted, not kept).
    public var count: Int

    /// Creates a record.
    public init(
        outcome: String, reason: String?, attachmentsDelivered: Int, attachmentsFailed: Int, deviceTime: Date,
        receivedAt: Date, count: Int
    ) {
        self.outcome = outcome
        self.reason = reason
        self.attachmentsDelivered = attachmentsDelivered
        self.attachmentsFailed = attachmentsFailed
        self.deviceTime = deviceTime
        self.receivedAt = receivedAt
        self.count = count
    }
}
