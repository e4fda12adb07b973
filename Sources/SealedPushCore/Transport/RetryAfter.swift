import Foundation

/// A `Retry-After` field value (RFC 9110 §10.2.3) read as a wait: what a provider (FCM) or a webhook receiver asks
/// the next attempt to wait for.
public enum RetryAfter {
    /// The longest wait a value is read as (a year); callers cap it far lower.
    public static let longest: Duration = .seconds(366 * 86_400)

    /// The wait a `Retry-After` value asks for.
    /// - Parameters:
    ///   - value: The field value: delay-seconds (`1*DIGIT`) or an HTTP date (IMF-fixdate, or the obsolete RFC 850 and
    ///     asctime forms recipients must accept, RFC 9110 §5.6.7).
    ///   - now: The current time, against which a date is read.
    /// - Returns: The wait (zero for a date in the past, at most ``longest``), or nil for a value that is neither form.
    public static func wait(_ value: String, now: Date = Date()) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard text.utf8.count <= 9, let seconds = Int64(text) else { return longest }
            return min(.seconds(seconds), longest)
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
                return seconds <= 0 ? .zero : min(.milliseconds(Int64(min(seconds, 366 * 86_400) * 1000)), longest)
            }
        }
        return nil
    }

    /// IMF-fixdate, RFC 850's and asctime's date forms.
    private static let httpDateFormats = [
        "EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy",
    ]
}
