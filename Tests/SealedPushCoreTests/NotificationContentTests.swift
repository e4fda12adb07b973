import Testing
@testable import SealedPushCore

@Suite struct NotificationContentTests {
    @Test func canonicalForm() throws {
        let content = NotificationContent(
            title: "Hi \"you\"", subtitle: "sub", body: "Line1\nLine2 ✉️ / \u{01}", badge: 3, sound: "default",
            threadID: "t-1", category: "MSG", interruptionLevel: .timeSensitive, relevanceScore: 0.5,
            targetContentID: "c", data: .object(["z": .number(1), "a": .array([.bool(true), .null, .number(1e-5)])]))
        // Hand-written from spec §4.1: table order, canonical escapes, raw UTF-8, `data` keys sorted.
        let expected = #"{"title":"Hi \"you\"","subtitle":"sub","body":"Line1\nLine2 ✉️ / \u0001","badge":3,"#
            + #""sound":"default","thread-id":"t-1","category":"MSG","interruption-level":"time-sensitive","#
            + #""relevance-score":0.5,"target-content-id":"c","data":{"a":[true,null,1e-05],"z":1}}"#
        #expect(String(decoding: try content.canonicalJSON(), as: UTF8.self) == expected)
        #expect(try NotificationContent(json: Array(expected.utf8)) == content)
    }

    @Test func emptyContent() throws {
        #expect(try NotificationContent().canonicalJSON() == Array("{}".utf8))
        #expect(try NotificationContent(json: Array("{}".utf8)) == NotificationContent())
    }

    @Test func keepsUnknownMembersEndToEnd() throws {
        let text = #"{"body":"b","future":{"x":1},"aa":[true]}"#
        let parsed = try NotificationContent(json: Array(text.utf8))
        #expect(parsed.body == "b")
        #expect(parsed.additionalMembers["future"] == .object(["x": .number(1)]))
        #expect(parsed.additionalMembers["aa"] == .array([.bool(true)]))
        // Canonical form: known members first, then unknown ones by UTF-8 name.
        #expect(String(decoding: try parsed.canonicalJSON(), as: UTF8.self) == #"{"body":"b","aa":[true],"future":{"x":1}}"#)
    }

    @Test func additionalMembersCannotShadowKnownOnes() {
        var content = NotificationContent(body: "b")
        content.additionalMembers = ["body": .string("shadow")]
        #expect(throws: SealedPushError.self) { try content.canonicalJSON() }
    }

    @Test(arguments: [
        #"{"title":1}"#, #"{"badge":-1}"#, #"{"badge":1.5}"#, #"{"badge":2147483648}"#, #"{"relevance-score":2}"#,
        #"{"interruption-level":"loud"}"#, #"{"attachments":["x"]}"#, #"{"attachments":{}}"#, "[]",
        #"{"attachments":[{"name":"x"}]}"#,
        #"{"title":null}"#, #"{"data":1e400}"#, #"{"data":-9007199254740992}"#, "\u{FEFF}{}",
        #"{"body":"a","body":"b"}"#,
    ])
    func rejectsBadContent(text: String) {
        do {
            _ = try NotificationContent(json: Array(text.utf8))
            Issue.record("accepted \(text)")
        } catch let error as SealedPushError {
            #expect(error.code == .malformedContent)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func refusesToEncodeOutOfRange() {
        #expect(throws: SealedPushError.self) { try NotificationContent(badge: -2).canonicalJSON() }
        #expect(throws: SealedPushError.self) { try NotificationContent(relevanceScore: .nan).canonicalJSON() }
        #expect(throws: SealedPushError.self) { try NotificationContent(data: .number(.infinity)).canonicalJSON() }
    }

    /// The number examples written out in spec §4.1.
    @Test func canonicalNumbersAsTheSpecStates() throws {
        let numbers: [Double] = [-3, 42, 0.5, 0.0001, 0.00001, 2.5e-7, 1e16, 1.2345678901234568e20, 1e15 + 0.5]
        let content = NotificationContent(data: .array(numbers.map(JSONValue.number)))
        #expect(String(decoding: try content.canonicalJSON(), as: UTF8.self)
            == #"{"data":[-3,42,0.5,0.0001,1e-05,2.5e-07,1e+16,1.2345678901234568e+20,1000000000000000.5]}"#)
    }
}
