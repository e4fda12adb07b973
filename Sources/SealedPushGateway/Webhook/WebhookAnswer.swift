import Foundation
import SealedPushCore

/// A receiver's answer to one webhook attempt: its status, and the wait it asked for in `Retry-After` (RFC 9110
/// §10.2.3), which the next attempt honours (up to ``UnregisteredWebhookConfiguration/maxBackoff``).
struct WebhookAnswer: Sendable, Equatable {
    /// The final status (1xx interim answers are skipped).
    let status: Int
    /// The wait the answer asked for: its `Retry-After` as delay-seconds, or as an HTTP date less the current time (a
    /// past date is zero); nil without the header or with a value that is neither.
    let retryAfter: Duration?

    /// An answer.
    /// - Parameters:
    ///   - status: The final status.
    ///   - retryAfter: The `Retry-After` field's value, if the answer had one.
    ///   - now: The current time, against which an HTTP date is read.
    init(status: Int, retryAfter: String?, now: Date = Date()) {
        self.status = status
        self.retryAfter = retryAfter.flatMap { RetryAfter.wait($0, now: now) }
    }

    /// Whether a later attempt may be answered differently: a `5xx`, `408 Request Timeout`, `425 Too Early`, `429 Too
    /// Many Requests` (and any status outside 200–599). Not a `3xx` (redirects are never followed and would not change)
    /// nor another `4xx` (the receiver refused this request as it is: the same bytes would be refused again).
    var isRetryable: Bool {
        switch status {
        case 300..<400: false
        case 408, 425, 429: true
        case 400..<500: false
        default: true
        }
    }
}
