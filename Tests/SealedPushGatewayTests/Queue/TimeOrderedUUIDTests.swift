import Foundation
import SealedPushGateway
import Testing

/// The gateway's notification ids against RFC 9562's layout of a version 7 UUID.
@Suite("Time-ordered notification ids")
struct TimeOrderedUUIDTests {
    /// RFC 9562 Appendix A.6: the example's timestamp 0x017F22E279B0 (Tuesday, February 22, 2022 2:22:22.00 PM
    /// GMT-05:00) gives the id `017F22E2-79B0-7CC3-98C4-DC0C0C07398F`: the same first 48 bits, version 7, variant 10.
    @Test func layoutOfRFC9562sExample() {
        let instant = Date(timeIntervalSince1970: 1_645_557_742)
        for _ in 0..<100 {
            let text = TimeOrderedUUID.make(now: instant).uuidString
            #expect(text.hasPrefix("017F22E2-79B0-7"), "\(text)")
            let variant = text[text.index(text.startIndex, offsetBy: 19)]
            #expect("89AB".contains(variant), "\(text): the variant bits are 10")
        }
    }

    /// Ids of later milliseconds sort after earlier ones, as bytes and as the lowercase text the store keeps.
    @Test func laterIdsSortAfter() {
        // Each in a millisecond of its own (the half keeps the division's rounding inside it).
        let ids = (0..<500).map {
            TimeOrderedUUID.make(now: Date(timeIntervalSince1970: (1_800_000_000_000.5 + Double($0)) / 1000))
        }
        let texts = ids.map { $0.uuidString.lowercased() }
        #expect(texts == texts.sorted())
    }

    /// The 74 random bits differ between ids of the same millisecond.
    @Test func idsOfOneMillisecondDiffer() {
        let instant = Date(timeIntervalSince1970: 1_800_000_000)
        let ids = Set((0..<10_000).map { _ in TimeOrderedUUID.make(now: instant) })
        #expect(ids.count == 10_000)
    }
}
