#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// Tells the backend what the device did with each notification (`Specs/control-v1.md` §4): seals a receipt with the
/// device key that received it, queues it durably, then posts it within the time it is given.
///
/// It never delays or endangers the notification itself: the step calls it only after the content handler (set
/// ``NotificationServiceStep/Configuration/receipts``), and a receipt that cannot be posted in the time left is
/// kept in the queue directory (the app group's) for the next run — ``flush(deadline:)`` from the extension or the
/// app (for example in a background task or at launch). The receipt is queued **before** it is posted, so an
/// extension killed mid-post loses nothing; a receipt posted twice is refused by the backend the second time (a
/// receipt opens once) and then dropped.
///
/// ```swift
/// let sender = try ReceiptSender(
///     sealer: ReceiptSealer(keyStore: keyStore, serverPublicKeys: [serverKey], topic: topic),
///     transport: URLSessionReceiptTransport(url: receiptsURL),
///     queueDirectory: appGroup.appendingPathComponent("receipts"))
/// ```
public struct ReceiptSender: Sendable {
    /// What became of one receipt.
    public enum Result: Sendable, Hashable {
        /// Posted and recorded.
        case sent
        /// Queued for a later ``ReceiptSender/flush(deadline:)`` (no answer in time, or the backend said later).
        case queued
        /// Refused by the backend for good (dropped).
        case refused(status: Int)
        /// No receipt can be sealed for it: the envelope could not be read, or the device no longer holds the key
        /// it was sealed to (nothing is queued).
        case notSealed(SealedPushError.Code)
    }

    /// The longest one post may take, whatever time is left.
    public static let maxPostDuration: Duration = .seconds(5)

    private let sealer: ReceiptSealer
    private let transport: any ReceiptTransport
    private let queue: ReceiptQueue
    private let clock: SealedPushClock

    /// Creates a sender.
    ///
    /// - Parameters:
    ///   - sealer: Seals receipts with the device's keys to the pinned server identity.
    ///   - transport: Posts them.
    ///   - queueDirectory: Where receipts wait (created 0700 if missing; share it between the extension and the
    ///     app through the app group).
    ///   - clock: The device time written in receipts.
    public init(
        sealer: ReceiptSealer, transport: any ReceiptTransport, queueDirectory: URL, clock: SealedPushClock = .system
    ) {
        self.sealer = sealer
        self.transport = transport
        self.queue = ReceiptQueue(directory: queueDirectory)
        self.clock = clock
    }

    /// Seals, queues and posts the receipt about one notification.
    ///
    /// - Parameters:
    ///   - envelope: The notification's envelope (its header names the message, the device key and the server key).
    ///   - report: What the step did with it.
    ///   - deadline: When posting must stop (the step passes its own deadline; at most ``maxPostDuration`` is used).
    /// - Returns: What became of the receipt.
    public func send(about envelope: [UInt8], report: NotificationReport, deadline: ContinuousClock.Instant) async -> Result {
        let header: EnvelopeHeader
        do {
            guard envelope.count >= EnvelopeV1.headerLength else {
                throw SealedPushError(.malformedEnvelope, "the envelope is shorter than its header")
            }
            header = try EnvelopeHeader(parsing: envelope[0..<EnvelopeV1.headerLength])
        } catch {
            return .notSealed((error as? SealedPushError)?.code ?? .malformedEnvelope)
        }
        let now = clock.now()
        let receipt: [UInt8]
        let name: String
        do {
            let record = DeliveryReceipt(
                messageID: header.messageID, outcome: Self.outcome(report.outcome),
                attachmentsDelivered: min(report.deliveredAttachments, 8),
                attachmentsFailed: min(report.attachmentFailures.count, 8), deviceTime: now)
            receipt = try sealer.seal(record, deviceKeyID: header.recipientKeyID, serverKeyID: header.senderKeyID, now: now)
            name = try queue.add(receipt, header: try EnvelopeHeader(parsing: receipt[0..<EnvelopeV1.headerLength]))
        } catch {
            return .notSealed((error as? SealedPushError)?.code ?? .io)
        }
        return await post(receipt, name: name, deadline: deadline)
    }

    /// Posts queued receipts, oldest first, until the deadline or the first that must wait.
    ///
    /// - Parameter deadline: When to stop.
    /// - Returns: How many were recorded by the backend.
    @discardableResult
    public func flush(deadline: ContinuousClock.Instant) async -> Int {
        var recorded = 0
        for name in queue.names() {
            guard ContinuousClock.now < deadline else { break }
            guard let receipt = queue.read(name, now: clock.now()) else { continue }
            switch await post(receipt, name: name, deadline: deadline) {
            case .sent: recorded += 1
            case .queued: return recorded
            case .refused, .notSealed: continue
            }
        }
        return recorded
    }

    /// How many receipts wait in the queue.
    public var queuedCount: Int { queue.names().count }

    private func post(_ receipt: [UInt8], name: String, deadline: ContinuousClock.Instant) async -> Result {
        let limit = min(deadline, ContinuousClock.now.advanced(by: Self.maxPostDuration))
        guard ContinuousClock.now < limit else { return .queued }
        switch await transport.post(receipt, deadline: limit) {
        case .recorded:
            queue.remove(name)
            return .sent
        case .refused(let status):
            queue.remove(name)
            return .refused(status: status)
        case .retryLater:
            return .queued
        }
    }

    /// The receipt outcome of a step outcome: a control message applied counts as decrypted.
    /// - Parameter outcome: What the step did.
    /// - Returns: What a receipt says of it.
    public static func outcome(_ outcome: NotificationOutcome) -> DeliveryReceipt.Outcome {
        switch outcome {
        case .decrypted, .control: .decrypted
        case .duplicate: .duplicate
        case .fallback(let reason): .fallback(reason: reason.rawValue)
        }
    }
}
