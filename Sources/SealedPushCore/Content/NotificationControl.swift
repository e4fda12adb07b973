/// What a control message does to notifications already delivered (`Specs/control-v1.md` §2): the content member
/// `control`, sealed like everything else, so nothing outside the ciphertext tells a control message from content.
public struct NotificationControl: Sendable, Hashable, Codable {
    /// The action and its arguments.
    public enum Action: Sendable, Hashable {
        /// Remove every delivered notification whose notification id is in `ids` or whose thread is `threadID`.
        case remove(ids: [String], threadID: String?)
        /// Show this content as the new content of notification `id`.
        case update(id: String)
        /// Set the app's badge.
        case badge(count: Int)
    }

    /// The action's name, for outcomes and metrics.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case remove, update, badge
    }

    /// The most notification ids one `remove` names.
    public static let maxRemovedIDs = 64
    /// The `userInfo` key under which a receiver hands the app a delivered notification's id (§1).
    public static let userInfoKey = "sealedpush-notification-id"

    /// The action.
    public let action: Action

    /// The action's name.
    public var kind: Kind {
        switch action {
        case .remove: .remove
        case .update: .update
        case .badge: .badge
        }
    }

    /// A removal by notification ids and/or a thread id.
    ///
    /// - Parameters:
    ///   - ids: Notification ids (§1), at most 64, no duplicates.
    ///   - threadID: A thread identifier, 1 to 255 bytes.
    /// - Throws: ``SealedPushError`` with `malformedContent` when neither is given or one is out of range.
    public static func remove(ids: [String] = [], threadID: String? = nil) throws -> NotificationControl {
        let control = NotificationControl(unchecked: .remove(ids: ids, threadID: threadID))
        try control.validate()
        return control
    }

    /// An update of notification `id`: the content beside it is the new content.
    ///
    /// - Parameter id: The notification id (§1).
    /// - Throws: ``SealedPushError`` with `malformedContent` for an id that is not 1 to 64 bytes without control
    ///   characters.
    public static func update(id: String) throws -> NotificationControl {
        let control = NotificationControl(unchecked: .update(id: id))
        try control.validate()
        return control
    }

    /// A badge count.
    ///
    /// - Parameter count: 0 ... 2,147,483,647.
    /// - Throws: ``SealedPushError`` with `malformedContent` when out of range.
    public static func badge(count: Int) throws -> NotificationControl {
        let control = NotificationControl(unchecked: .badge(count: count))
        try control.validate()
        return control
    }

    private init(unchecked action: Action) {
        self.action = action
    }

    /// Reads a `control` member strictly (§2): an object with an `action` and exactly that action's members.
    ///
    /// - Parameter json: The member's value.
    /// - Throws: ``SealedPushError`` with `malformedContent` naming what is wrong (never content text).
    public init(json: JSONValue) throws {
        guard case .object(let members) = json else {
            throw Self.malformed("must be an object")
        }
        guard case .string(let name)? = members["action"] else {
            throw Self.malformed("needs an \"action\" string: remove, update or badge")
        }
        func allow(_ names: Set<String>) throws {
            for (member, _) in members where member != "action" && !names.contains(member) {
                // Never the member's name: it is decrypted plaintext.
                throw Self.malformed("has a member that action \(name) does not take (it takes \(names.sorted()))")
            }
        }
        switch name {
        case "remove":
            try allow(["ids", "thread-id"])
            var ids: [String] = []
            if let value = members["ids"] {
                guard case .array(let elements) = value else { throw Self.malformed("\"ids\" must be an array of strings") }
                for element in elements {
                    guard case .string(let id) = element else { throw Self.malformed("\"ids\" must be an array of strings") }
                    ids.append(id)
                }
                guard !ids.isEmpty else { throw Self.malformed("\"ids\" must name at least one notification") }
            }
            var threadID: String?
            if let value = members["thread-id"] {
                guard case .string(let text) = value else { throw Self.malformed("\"thread-id\" must be a string") }
                threadID = text
            }
            action = .remove(ids: ids, threadID: threadID)
        case "update":
            try allow(["id"])
            guard case .string(let id)? = members["id"] else { throw Self.malformed("action update needs an \"id\" string") }
            action = .update(id: id)
        case "badge":
            try allow(["count"])
            guard case .number(let number)? = members["count"], number == number.rounded(), number >= 0,
                  number <= Double(Int32.max)
            else { throw Self.malformed("action badge needs a \"count\" integer 0...2147483647") }
            action = .badge(count: Int(number))
        default:
            throw Self.malformed("has an unknown action (remove, update and badge are defined)")
        }
        try validate()
    }

    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }

    /// The member's JSON value (written canonically, members sorted, by the content's writer).
    public var jsonValue: JSONValue {
        var members = JSONObject()
        switch action {
        case .remove(let ids, let threadID):
            members["action"] = .string("remove")
            if !ids.isEmpty { members["ids"] = .array(ids.map(JSONValue.string)) }
            if let threadID { members["thread-id"] = .string(threadID) }
        case .update(let id):
            members["action"] = .string("update")
            members["id"] = .string(id)
        case .badge(let count):
            members["action"] = .string("badge")
            members["count"] = .number(Double(count))
        }
        return .object(members)
    }

    func validate() throws {
        switch action {
        case .remove(let ids, let threadID):
            guard !ids.isEmpty || threadID != nil else {
                throw Self.malformed("action remove needs \"ids\", \"thread-id\" or both")
            }
            guard ids.count <= Self.maxRemovedIDs else {
                throw Self.malformed("action remove names \(ids.count) ids; at most \(Self.maxRemovedIDs)")
            }
            guard ids.allSatisfy(Self.isNotificationID) else {
                throw Self.malformed("every id must be 1 to 64 bytes of UTF-8 without control characters")
            }
            // By code points (§1): Swift's String equality would merge "\u{e9}" and "e\u{301}", two ids.
            guard Set(ids.map { Array($0.utf8) }).count == ids.count else {
                throw Self.malformed("action remove names an id twice")
            }
            if let threadID, !(1...255).contains(threadID.utf8.count) {
                throw Self.malformed("\"thread-id\" must be 1 to 255 bytes")
            }
        case .update(let id):
            guard Self.isNotificationID(id) else {
                throw Self.malformed("\"id\" must be 1 to 64 bytes of UTF-8 without control characters")
            }
        case .badge(let count):
            guard count >= 0, count <= Int(Int32.max) else { throw Self.malformed("\"count\" must be 0...2147483647") }
        }
    }

    /// Whether `text` is a notification id (§1): 1 to 64 bytes of UTF-8, no code point below U+0020.
    public static func isNotificationID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && !text.unicodeScalars.contains { $0.value < 0x20 }
    }

    private static func malformed(_ detail: String) -> SealedPushError {
        SealedPushError(.malformedContent, "content field \"control\" \(detail)")
    }
}
