import Testing
import SealedPushCore

/// Regression (found by the tamper suite, `TamperBadInputTests.senderRefusesContentReceiversMustReject`): the
/// canonical encoder accepted app data nested deeper than spec §4 allows, so a sender sealed content that every
/// receiver must reject with `malformedContent`. The encoder must refuse what the decoder refuses.
@Suite struct RegressionContentDepthTests {
    /// `depth` arrays nested inside each other, innermost empty.
    static func nested(_ depth: Int) -> JSONValue {
        var value = JSONValue.array([])
        for _ in 1..<depth { value = .array([value]) }
        return value
    }

    @Test func dataAtTheLimitEncodesAndParsesBack() throws {
        // Top-level object (level 1) + 31 arrays = 32 levels: the deepest content spec §4 accepts.
        let content = NotificationContent(data: Self.nested(31))
        let json = try content.canonicalJSON()
        #expect(json == Array((#"{"data":"# + String(repeating: "[", count: 31) + String(repeating: "]", count: 31)
            + "}").utf8))
        #expect(try NotificationContent(json: json) == content)
    }

    @Test func dataOverTheLimitIsRefused() throws {
        for depth in [32, 33, 200] {
            #expect(throws: SealedPushError.self) { _ = try NotificationContent(data: Self.nested(depth)).canonicalJSON() }
            do {
                _ = try NotificationContent(data: Self.nested(depth)).canonicalJSON()
            } catch let error as SealedPushError {
                #expect(error.code == .malformedContent)
            }
        }
    }

    @Test func attachmentsOverTheLimitAreRefused() throws {
        // content (1) → attachments array (2) → element object (3) → "extra" value nesting.
        let fits = JSONValue.object(["url": .string("https://e.example/a"), "extra": Self.nested(29)])
        let json = try NotificationContent(attachments: [fits]).canonicalJSON()
        #expect(try NotificationContent(json: json).attachments == [fits])
        let tooDeep = JSONValue.object(["url": .string("https://e.example/a"), "extra": Self.nested(30)])
        #expect(throws: SealedPushError.self) { _ = try NotificationContent(attachments: [tooDeep]).canonicalJSON() }
    }
}
