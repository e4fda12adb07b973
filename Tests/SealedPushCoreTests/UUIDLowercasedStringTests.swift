import Foundation
import SealedPushCore
import Testing

/// `UUID.lowercasedString` against the RFCs' own examples and Foundation's `uuidString`.
@Suite struct UUIDLowercasedStringTests {
    /// RFC 4122 §4.1.1's example and RFC 9562's version 7 example (Appendix A.6), as the RFCs print them
    /// (lowercased where the RFC prints uppercase); the nil and max UUIDs (RFC 9562 §5.9, §5.10).
    @Test(arguments: [
        "f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
    ])
    func rfcExamples(_ text: String) throws {
        let id = try #require(UUID(uuidString: text))
        #expect(id.lowercasedString == text)
    }

    /// Random ids: the same text as Foundation's formatting, lowercased.
    @Test func matchesFoundation() {
        for _ in 0..<1_000 {
            let id = UUID()
            #expect(id.lowercasedString == id.uuidString.lowercased())
        }
    }
}
