import SealedPushCore
import Testing

/// `Specs/control-v1.md` §1–§2 at the content model: the members' canonical place, what parses, what is refused.
/// Expected JSON is written out here from the spec's tables.
@Suite("Control messages and notification ids (control-v1 §1–§2)")
struct NotificationControlTests {
    func parse(_ json: String) throws -> NotificationContent { try NotificationContent(json: Array(json.utf8)) }

    func code(_ body: () throws -> Void) -> SealedPushError.Code? {
        do { try body(); return nil } catch let error as SealedPushError { return error.code } catch { return nil }
    }

    @Test("canonical order: notification-id and control after content-ref, before unknown members")
    func canonicalOrder() throws {
        let update = NotificationContent(
            title: "Edited", body: "new text", notificationID: "msg-7", control: try .update(id: "msg-7"),
            additionalMembers: ["zz": .bool(true)])
        #expect(String(decoding: try update.canonicalJSON(), as: UTF8.self)
            == #"{"title":"Edited","body":"new text","notification-id":"msg-7","control":{"action":"update","id":"msg-7"},"zz":true}"#)
        let remove = NotificationContent(notificationID: "c-1", control: try .remove(ids: ["a", "b"], threadID: "chat-9"))
        #expect(String(decoding: try remove.canonicalJSON(), as: UTF8.self)
            == #"{"notification-id":"c-1","control":{"action":"remove","ids":["a","b"],"thread-id":"chat-9"}}"#)
        let badge = NotificationContent(control: try .badge(count: 12))
        #expect(String(decoding: try badge.canonicalJSON(), as: UTF8.self) == #"{"control":{"action":"badge","count":12}}"#)
    }

    @Test("each action parses back to what was written")
    func parsesEachAction() throws {
        let remove = try parse(#"{"control":{"thread-id":"t","action":"remove"}}"#)
        #expect(remove.control?.action == .remove(ids: [], threadID: "t"))
        let update = try parse(#"{"body":"x","control":{"id":"m","action":"update"}}"#)
        #expect(update.control?.action == .update(id: "m") && update.body == "x")
        #expect(try parse(#"{"control":{"action":"badge","count":3.0}}"#).control?.action == .badge(count: 3))
        #expect(try parse(#"{"notification-id":"n-1","body":"hi"}"#).notificationID == "n-1")
    }

    @Test("ids compare code point by code point (§1): NFC and NFD spellings are two ids, never one")
    func idsCompareByCodePoints() throws {
        // "\u{e9}" and "e\u{301}" are canonically equivalent, so Swift's String == calls them equal; §1 does not.
        let remove = try parse(#"{"control":{"action":"remove","ids":["\u00e9","e\u0301"]}}"#)
        #expect(remove.control.map { control -> [[UInt8]] in
            guard case .remove(let ids, _) = control.action else { return [] }
            return ids.map { Array($0.utf8) }
        } == [[0xC3, 0xA9], [0x65, 0xCC, 0x81]])
        #expect(code { _ = try parse(#"{"control":{"action":"remove","ids":["e\u0301","e\u0301"]}}"#) } == .malformedContent)
        #expect(code { _ = try parse(#"{"notification-id":"\u00e9","control":{"action":"update","id":"e\u0301"}}"#) }
            == .malformedContent)
        #expect(try parse(#"{"notification-id":"e\u0301","control":{"action":"update","id":"e\u0301"}}"#).notificationID
            .map { Array($0.utf8) } == [0x65, 0xCC, 0x81])
    }

    @Test("what the spec refuses is malformedContent, and no message names a member or value",
          arguments: [
              #"{"control":"remove"}"#,
              #"{"control":{}}"#,
              #"{"control":{"action":"delete","ids":["a"]}}"#,
              #"{"control":{"action":"remove"}}"#,
              #"{"control":{"action":"remove","ids":[]}}"#,
              #"{"control":{"action":"remove","ids":["a","a"]}}"#,
              #"{"control":{"action":"remove","ids":[1]}}"#,
              #"{"control":{"action":"remove","ids":["a"],"secret-typo":1}}"#,
              #"{"control":{"action":"update"}}"#,
              #"{"control":{"action":"update","id":""}}"#,
              #"{"control":{"action":"badge","count":-1}}"#,
              #"{"control":{"action":"badge","count":1.5}}"#,
              #"{"control":{"action":"badge","count":2147483648}}"#,
              #"{"body":"secret words","control":{"action":"remove","ids":["a"]}}"#,
              #"{"title":"secret words","control":{"action":"badge","count":1}}"#,
              #"{"notification-id":"a","control":{"action":"update","id":"b"}}"#,
              #"{"notification-id":""}"#,
              #"{"notification-id":"tab\there"}"#,
              #"{"notification-id":7}"#,
          ])
    func refusals(_ json: String) throws {
        do {
            _ = try parse(json)
            Issue.record("accepted \(json)")
        } catch let error as SealedPushError {
            #expect(error.code == .malformedContent)
            #expect(!error.message.contains("secret"))
        }
    }

    @Test("65 ids are too many; 64 fit; a remove needs ids or a thread")
    func removalBounds() throws {
        let ids = (0..<65).map { "id-\($0)" }
        #expect(code { _ = try NotificationControl.remove(ids: ids) } == .malformedContent)
        #expect(try NotificationControl.remove(ids: Array(ids.prefix(64))).kind == .remove)
        #expect(code { _ = try NotificationControl.remove() } == .malformedContent)
        #expect(code { _ = try NotificationControl.update(id: String(repeating: "x", count: 65)) } == .malformedContent)
        // A sender cannot build content a receiver would refuse.
        let shown = NotificationContent(body: "x", control: try .badge(count: 1))
        #expect(code { _ = try shown.canonicalJSON() } == .malformedContent)
    }
}
