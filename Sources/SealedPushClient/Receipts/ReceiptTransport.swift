/// Posts sealed receipts to the backend (the gateway's `POST /v1/apps/{appId}/receipts`): what
/// ``ReceiptSender`` uses. `SealedPushClientURLSession` has one on `URLSession`.
public protocol ReceiptTransport: Sendable {
    /// Posts one receipt envelope and reports how the backend answered.
    ///
    /// - Parameters:
    ///   - receipt: The sealed receipt (354 bytes).
    ///   - deadline: When the post must have ended; past it, the transport gives up (``ReceiptPostAnswer/retryLater``).
    /// - Returns: The answer, or ``ReceiptPostAnswer/retryLater`` when there was none (network, timeout).
    func post(_ receipt: [UInt8], deadline: ContinuousClock.Instant) async -> ReceiptPostAnswer
}

/// How the backend answered a receipt.
public enum ReceiptPostAnswer: Sendable, Hashable {
    /// Recorded (`204`).
    case recorded
    /// Refused for good (`400`, `404`, `413`, `422`: malformed, replayed, unknown): sending it again cannot help.
    case refused(status: Int)
    /// No answer, or one that says to try later (`429`, `5xx`): keep it queued.
    case retryLater
}
