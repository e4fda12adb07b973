import Foundation
import SealedPushCore
import Testing

/// The release's version string, against Semantic Versioning 2.0.0's own grammar.
@Suite("SealedPushVersion")
struct SealedPushVersionTests {
    /// The regular expression semver.org gives for a valid version (§ "Is there a suggested regular expression (RegEx)
    /// to check a SemVer string?", the ECMAScript one).
    static let semanticVersionPattern =
        #"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"#

    static func isSemanticVersion(_ text: String) -> Bool {
        text.range(of: semanticVersionPattern, options: .regularExpression) != nil
    }

    @Test func theVersionIsASemanticVersion() {
        #expect(Self.isSemanticVersion(SealedPushVersion.current), "\(SealedPushVersion.current)")
    }

    /// The pattern itself refuses what SemVer refuses (so the test above can fail).
    @Test(arguments: ["1.0", "01.0.0", "1.0.0-", "v1.0.0", "1.0.0 ", "1.0.0-01"])
    func notASemanticVersion(_ text: String) {
        #expect(!Self.isSemanticVersion(text))
    }

    /// `product/version`, RFC 9110 §10.1.5.
    @Test func userAgentIsProductSlashVersion() {
        #expect(SealedPushVersion.userAgent("sealed-push-gateway") == "sealed-push-gateway/" + SealedPushVersion.current)
    }
}
