import Foundation
import Testing
import SealedPushCore

/// Guards the quad-at-a-time base64url decoder (rewritten for speed: decoding the `sp` member was a third of the
/// cost of locating an envelope in an APNs body). Foundation's decoder, fed the same text translated to the
/// standard alphabet with padding, is the independent answer.
@Suite struct RegressionBase64URLTests {
    @Test func agreesWithFoundationOnEveryLengthUpTo300() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let standard = Data(bytes).base64EncodedString()
            let text = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(try Base64URL.decode(text) == bytes, "length \(length)")
            #expect(Array(Data(base64Encoded: standard) ?? Data()) == bytes)
        }
    }

    @Test(arguments: [
        ("AB", "unused bits"), ("AAB", "unused bits"), ("A", "mod 4"), ("AAAAA", "mod 4"), ("AA=", "padding"),
        ("AAAA+AAA", "+"), ("AAAAAA/A", "/"), ("AAAA AAA", "space"), ("AA\u{e9}", "non-ASCII"), ("AAAAA\nA", "newline"),
    ])
    func rejects(text: String, why: String) {
        #expect(throws: SealedPushError.self, "\(why)") { _ = try Base64URL.decode(text) }
    }

    @Test func reportsTheFirstInvalidCharacter() {
        do {
            _ = try Base64URL.decode("AAAAAAAA?AAA=AA")
            Issue.record("accepted invalid text")
        } catch let error as SealedPushError {
            #expect(error.code == .badEncoding)
            #expect(error.message.contains("position 8"), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
