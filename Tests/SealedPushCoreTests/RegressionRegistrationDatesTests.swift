import Foundation
import Testing
import SealedPushCore

/// Regression (FuzzRegistration, 8 inputs): with Foundation's `ISO8601DateFormatter`, registration dates such as
/// `-026-11-21T1:00:0+2:00`, `000-11-21T…`, `20e6-11-21T…` or `20261e309-11-21T…` were accepted — leniently, and then
/// did not survive a format/parse round trip (moved by hours or years) — and one of them made the formatter read
/// out of bounds under AddressSanitizer. Core now parses ISO 8601 itself; none of these is an RFC 3339 date, so each
/// must be rejected, and the whole registration with it.
@Suite struct RegressionRegistrationDatesTests {
    static let fuzzedDates = [
        "-026-11-21T1:00:00+2:0019T10:00:00.250Z", "-026-11-21T1:00:0+2:00", "201e3096-11-21T1:00:00+02:0",
        "-2026-11-21T0:00:00+020", "20288886-11-1T10:00:00+0", "000-11-21T1:00:00+02:00", "20e6-11-21T1:00:00+02:00",
        "20261e309-11-21T10:00:00+02:00", "20-12-19T10:00:00.250Z", "2026,1110:0",
    ]

    @Test(arguments: fuzzedDates)
    func fuzzedDateIsRejected(text: String) {
        #expect(throws: SealedPushError.self) { _ = try DeviceRegistration.parseDate(text) }
        let json = #"{"version":1,"publicKey":"SPK1:x","keyId":"0123456789abcdef","createdAt":"\#(text)"}"#
        #expect(throws: (any Error).self) {
            _ = try JSONDecoder().decode(DeviceRegistration.self, from: Data(json.utf8))
        }
    }

    @Test func validDatesStillParseAndRoundTrip() throws {
        // 2026-11-21T10:00:00Z = 1,795,255,200 s (20,778 days × 86,400 + 36,000).
        let date = try DeviceRegistration.parseDate("2026-11-21T10:00:00Z")
        #expect(date.timeIntervalSince1970 == 1_795_255_200)
        #expect(DeviceRegistration.formatDate(date) == "2026-11-21T10:00:00Z")
        #expect(try DeviceRegistration.parseDate("2026-11-21T12:00:00+02:00") == date)
        #expect(try DeviceRegistration.parseDate("2026-11-21T10:00:00.250Z").timeIntervalSince1970.rounded(.down)
            == 1_795_255_200)
    }
}
