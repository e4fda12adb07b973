/// Counts for a bulk send.
public struct APNsBulkSummary: Sendable, Hashable {
    /// Notifications handled.
    public var total = 0
    /// Delivered.
    public var delivered = 0
    /// Failed, by reason.
    public var failedByReason: [APNsReason: Int] = [:]
    /// Notifications that needed more than one request.
    public var retried = 0
    /// Requests made in all.
    public var attempts = 0
    /// Notifications resent after an ambiguous connection loss (see ``APNsSendReport/possibleDuplicate``).
    public var possibleDuplicates = 0

    /// Creates an empty summary.
    public init() {}

    /// Failed notifications.
    public var failed: Int { failedByReason.values.reduce(0, +) }

    /// Adds one report.
    /// - Parameter report: The report to count.
    public mutating func add(_ report: APNsSendReport) {
        total += 1
        attempts += report.attempts
        if report.attempts > 1 { retried += 1 }
        if report.possibleDuplicate { possibleDuplicates += 1 }
        switch report.result {
        case .delivered: delivered += 1
        case .failed(let failure): failedByReason[failure.reason, default: 0] += 1
        }
    }
}
