import Foundation

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
        self.retryAfter = retryAfter.flatMap { Self.wait(retryAfter: $0, now: now) }
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

    /// The wait a `Retry-After` value asks for.
    /// - Parameters:
    ///   - value: The field value: delay-seconds (`1*DIGIT`) or an HTTP date (IMF-fixdate, or the obsolete RFC 850
    ///     and asctime forms recipients must accept).
    ///   - now: The current time.
    /// - Returns: The wait (zero for a date in the past), or nil for a value that is neither form.
    static func wait(retryAfter value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // More than a year is as good as forever here: the wait is capped far below it.
            guard text.utf8.count <= 9, let seconds = Int64(text) else { return .seconds(366 * 86_400) }
            return .seconds(min(seconds, 366 * 86_400))
        }
        // asctime pads a one-digit day with a space ("Nov  6"): read runs of spaces as one.
        let date = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        for format in httpDateFormats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: date) {
                let seconds = date.timeIntervalSince(now)
                return seconds <= 0 ? .zero : .milliseconds(Int64(min(seconds, 366 * 86_400) * 1000))
            }
        }
        return nil
    }

    /// IMF-fixdate, RFC 850's and asctime's date forms (RFC 9110 §5.6.7).
    private static let httpDateFormats = [
        "EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy",
    ]
}
