import Testing
@testable import SealedPushCore

/// Expected values computed independently with Python's `datetime` (UTC).
@Suite struct ISO8601Tests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"), (951_782_400, "2000-02-29T00:00:00Z"),
        (1_800_000_000, "2027-01-15T08:00:00Z"), (4_102_444_800, "2100-01-01T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"), (253_402_300_799, "9999-12-31T23:59:59Z"),
    ])
    func formatsAndParses(seconds: Int64, text: String) {
        #expect(ISO8601.format(unixSeconds: seconds) == text)
        #expect(ISO8601.parse(text) == seconds)
    }

    @Test func offsetsAndFractions() {
        #expect(ISO8601.parse("2026-11-21T12:30:00+02:00") == 1_795_257_000)
        #expect(ISO8601.parse("2024-02-29T23:59:59.999-05:30") == 1_709_270_999)
        #expect(ISO8601.parse("2027-01-15t08:00:00z") == 1_800_000_000)
    }

    @Test(arguments: [
        "", "2026-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-21T24:00:00Z",
        "2026-11-21T10:00:00", "2026-11-21 10:00:00Z", "2026-11-21T10:00:00.Z", "2026-11-21T10:00:00Z ",
        "2026-11-21T10:00:60Z", "26-11-21T10:00:00Z", "2026-11-21T10:00:00+2:00",
    ])
    func rejects(text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    /// Found by the FuzzRegistration smoke run in CI: an offset that moves the instant past year 9999 (or before
    /// 0000) parsed into something the formatter could not write back.
    @Test(arguments: [
        "9999-12-31T23:59:59.9999-13:59", "9999-12-31T23:59:59.9999-13:53", "9999-12-31T23:59:59.99060999-13:51",
        "0000-01-01T00:00:00+00:01",
    ])
    func rejectsInstantsOutsideFourDigitYears(text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    @Test func edgesRoundTripAndFormattingClamps() {
        #expect(ISO8601.parse("9999-12-31T23:59:59Z") == ISO8601.latest)
        #expect(ISO8601.parse("0000-01-01T00:00:00Z") == ISO8601.earliest)
        #expect(ISO8601.parse("9999-12-31T23:59:59+13:59") == ISO8601.latest - 50_340)
        #expect(ISO8601.format(unixSeconds: .max) == "9999-12-31T23:59:59Z")
        #expect(ISO8601.format(unixSeconds: .min) == "0000-01-01T00:00:00Z")
        #expect(ISO8601.clampedSeconds(.infinity) == ISO8601.latest)
        #expect(ISO8601.clampedSeconds(-.infinity) == ISO8601.earliest)
        #expect(ISO8601.clampedSeconds(.nan) == 0)
        #expect(ISO8601.clampedSeconds(1e300) == ISO8601.latest)
        #expect(ISO8601.clampedSeconds(-0.5) == -1)
    }
}
