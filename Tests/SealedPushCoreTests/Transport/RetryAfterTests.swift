import Foundation
import SealedPushCore
import Testing

/// `Retry-After` read as a wait (RFC 9110 §10.2.3), against RFC 9110's own example date (§5.6.7) in its three forms.
@Suite("Retry-After")
struct RetryAfterTests {
    /// Delay-seconds, IMF-fixdate, the obsolete RFC 850 and asctime dates, a past date (no wait); anything else is
    /// not a `Retry-After` (nil: the caller's backoff applies).
    @Test func theFieldsForms() {
        let now = Date(timeIntervalSince1970: 784_111_767)  // Sun, 06 Nov 1994 08:49:27 GMT
        func wait(_ value: String) -> Duration? { RetryAfter.wait(value, now: now) }
        #expect(wait("120") == .seconds(120))
        #expect(wait(" 0 ") == .zero)
        #expect(wait("Sun, 06 Nov 1994 08:49:37 GMT") == .seconds(10))
        #expect(wait("Sunday, 06-Nov-94 08:49:37 GMT") == .seconds(10))
        #expect(wait("Sun Nov  6 08:49:37 1994") == .seconds(10))
        #expect(wait("Sun, 06 Nov 1994 08:00:00 GMT") == .zero)
        #expect(wait("99999999999999999999") == RetryAfter.longest)
        #expect(wait("-5") == nil)
        #expect(wait("+5") == nil)
        #expect(wait("1.5") == nil)
        #expect(wait("soon") == nil)
        #expect(wait("") == nil)
    }
}
