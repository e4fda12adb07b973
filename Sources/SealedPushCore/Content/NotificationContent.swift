/// The notification content that travels inside the envelope (spec §4).
///
/// Everything the user sees — and everything that says something about the message, such as its thread,
/// category or badge — lives here, encrypted. Use ``canonicalJSON()`` to encode and ``init(json:)`` to decode.
///
/// Members this version does not know are kept in ``additionalMembers`` and travel end to end, so a later version's
/// members survive a receiver (or a relay) built on this one.
public struct NotificationContent: Sendable, Hashable, Codable {
    /// The title.
    public var title: String?
    /// The subtitle.
    public var subtitle: String?
    /// The body text.
    public var body: String?
    /// The badge number, 0 ... 2,147,483,647.
    public var badge: Int?
    /// `"default"` or the name of a sound file in the app.
    public var sound: String?
    /// The thread identifier used to group notifications.
    public var threadID: String?
    /// The category identifier that selects actions.
    public var category: String?
    /// The interruption level.
    public var interruptionLevel: InterruptionLevel?
    /// The relevance score, 0 ... 1.
    public var relevanceScore: Double?
    /// The target content identifier.
    public var targetContentID: String?
    /// App data handed to the app in `userInfo`: any JSON value, `null` included (absent is `nil`).
    public var data: JSONValue?
    /// Attachment descriptors (spec §4.2, `Specs/blob-v1.md` §6.2): objects with at least a `url` string. Only
    /// receivers that process attachments look further (``AttachmentDescriptor/parseAll(_:)``).
    public var attachments: [JSONValue]?
    /// A reference to the full content sealed as a blob (spec §4.3, `Specs/blob-v1.md` §6.4), when it did not fit
    /// the APNs budget: the members beside it are then a preview that a receiver shows if it cannot fetch the rest.
    /// Every receiver checks only that it is an object with a `url` string.
    public var contentReference: JSONValue?
    /// The sender's id of this notification (`Specs/control-v1.md` §1): 1 to 64 bytes of UTF-8 without control
    /// characters. Receivers hand it to the app (`userInfo["sealedpush-notification-id"]` on iOS) so a later control
    /// message can find the notification.
    public var notificationID: String?
    /// What this message does to notifications already delivered (`Specs/control-v1.md` §2), or nil for content.
    public var control: NotificationControl?
    /// Members this version does not define (spec §4: kept end to end, written after the known members in
    /// canonical order). A name of a known member here is rejected by ``canonicalJSON()``.
    public var additionalMembers: JSONObject = JSONObject()

    /// Creates content; every field is optional.
    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, badge: Int? = nil, sound: String? = nil,
        threadID: String? = nil, category: String? = nil, interruptionLevel: InterruptionLevel? = nil,
        relevanceScore: Double? = nil, targetContentID: String? = nil, data: JSONValue? = nil,
        attachments: [JSONValue]? = nil, contentReference: JSONValue? = nil, notificationID: String? = nil,
        control: NotificationControl? = nil, additionalMembers: JSONObject = JSONObject()
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.category = category
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.targetContentID = targetContentID
        self.data = data
        self.attachments = attachments
        self.contentReference = contentReference
        self.notificationID = notificationID
        self.control = control
        self.additionalMembers = additionalMembers
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case title, subtitle, body, badge, sound
        case threadID = "thread-id"
        case category
        case interruptionLevel = "interruption-level"
        case relevanceScore = "relevance-score"
        case targetContentID = "target-content-id"
        case data, attachments
        case contentReference = "content-ref"
        case notificationID = "notification-id"
        case control
    }

    /// The canonical JSON encoding (spec §4.1).
    /// - Returns: UTF-8 JSON bytes.
    /// - Throws: ``SealedPushError`` with `malformedContent` if a field is out of range (badge, relevance score,
    ///   a non-finite number in `data`).
    public func canonicalJSON() throws -> [UInt8] {
        try validate()
        var writer = JSONWriter()
        var first = true
        func key(_ name: StaticString) {
            if !first { writer.raw(",") }
            first = false
            writer.raw(name)
        }
        writer.raw("{")
        if let title { key("\"title\":"); writer.string(title) }
        if let subtitle { key("\"subtitle\":"); writer.string(subtitle) }
        if let body { key("\"body\":"); writer.string(body) }
        if let badge { key("\"badge\":"); writer.number(Double(badge)) }
        if let sound { key("\"sound\":"); writer.string(sound) }
        if let threadID { key("\"thread-id\":"); writer.string(threadID) }
        if let category { key("\"category\":"); writer.string(category) }
        if let interruptionLevel { key("\"interruption-level\":"); writer.string(interruptionLevel.rawValue) }
        if let relevanceScore { key("\"relevance-score\":"); writer.number(relevanceScore) }
        if let targetContentID { key("\"target-content-id\":"); writer.string(targetContentID) }
        if let data { key("\"data\":"); writer.value(data) }
        if let attachments { key("\"attachments\":"); writer.value(.array(attachments)) }
        if let contentReference { key("\"content-ref\":"); writer.value(contentReference) }
        if let notificationID { key("\"notification-id\":"); writer.string(notificationID) }
        if let control { key("\"control\":"); writer.value(control.jsonValue) }
        for (name, value) in additionalMembers {
            if !first { writer.raw(",") }
            first = false
            writer.string(name)
            writer.raw(":")
            writer.value(value)
        }
        writer.raw("}")
        return writer.bytes
    }

    /// Decodes content JSON strictly (spec §4): unknown members are kept in ``additionalMembers``; wrong types
    /// (`null` included, except for `data`), out-of-range values, duplicated names (by code points), invalid UTF-8,
    /// integers beyond ±(2^53 − 1) and nesting over 32 levels (the top-level object is level 1) are rejected.
    /// - Parameter bytes: UTF-8 JSON.
    /// - Throws: ``SealedPushError`` with code `malformedContent` naming the field or the byte offset, never the
    ///   content's text (this runs on decrypted plaintext).
    public init(json bytes: [UInt8]) throws {
        guard case .object(let members) = try JSONParser.parse(bytes, maxDepth: 32, errorCode: .malformedContent)
        else { throw SealedPushError(.malformedContent, "content must be a JSON object") }
        for (name, value) in members where !Self.isKnown(name) {
            additionalMembers[name] = value
        }
        func string(_ key: CodingKeys) throws -> String? {
            guard let value = members[key.rawValue] else { return nil }
            guard case .string(let text) = value else {
                throw SealedPushError(.malformedContent, "content field \"\(key.rawValue)\" must be a string")
            }
            return text
        }
        title = try string(.title)
        subtitle = try string(.subtitle)
        body = try string(.body)
        sound = try string(.sound)
        threadID = try string(.threadID)
        category = try string(.category)
        targetContentID = try string(.targetContentID)
        if let value = members[CodingKeys.badge.rawValue] {
            guard case .number(let number) = value, number == number.rounded(), number >= 0,
                number <= Double(Int32.max)
            else {
                throw SealedPushError(.malformedContent, "content field \"badge\" must be an integer 0...2147483647")
            }
            badge = Int(number)
        }
        if let value = members[CodingKeys.interruptionLevel.rawValue] {
            guard case .string(let text) = value, let level = InterruptionLevel(rawValue: text) else {
                throw SealedPushError(
                    .malformedContent,
                    "content field \"interruption-level\" must be passive, active, time-sensitive or critical")
            }
            interruptionLevel = level
        }
        if let value = members[CodingKeys.relevanceScore.rawValue] {
            guard case .number(let number) = value, number >= 0, number <= 1 else {
                throw SealedPushError(.malformedContent, "content field \"relevance-score\" must be a number 0...1")
            }
            relevanceScore = number
        }
        data = members[CodingKeys.data.rawValue]
        if let value = members[CodingKeys.attachments.rawValue] {
            guard case .array(let elements) = value, elements.allSatisfy(Self.isAttachmentShape) else {
                throw SealedPushError(
                    .malformedContent, "content field \"attachments\" must be an array of objects with a \"url\" string")
            }
            attachments = elements
        }
        if let value = members[CodingKeys.contentReference.rawValue] {
            guard Self.isAttachmentShape(value) else {
                throw SealedPushError(.malformedContent, "content field \"content-ref\" must be an object with a \"url\" string")
            }
            contentReference = value
        }
        if let value = members[CodingKeys.notificationID.rawValue] {
            guard case .string(let text) = value, NotificationControl.isNotificationID(text) else {
                throw SealedPushError(
                    .malformedContent,
                    "content field \"notification-id\" must be a string of 1 to 64 bytes without control characters")
            }
            notificationID = text
        }
        if let value = members[CodingKeys.control.rawValue] {
            control = try NotificationControl(json: value)
        }
        try validateControl()
    }

    /// `Specs/control-v1.md` §2: a `remove` or `badge` message carries nothing to show; an update names the
    /// notification its own id says.
    private func validateControl() throws {
        guard let control else { return }
        switch control.action {
        case .remove, .badge:
            let shown: [(String, Bool)] = [
                ("title", title != nil), ("subtitle", subtitle != nil), ("body", body != nil), ("sound", sound != nil),
                ("thread-id", threadID != nil), ("category", category != nil),
                ("interruption-level", interruptionLevel != nil), ("relevance-score", relevanceScore != nil),
                ("target-content-id", targetContentID != nil), ("data", data != nil), ("attachments", attachments != nil),
                ("content-ref", contentReference != nil),
            ]
            if let (name, _) = shown.first(where: \.1) {
                throw SealedPushError(
                    .malformedContent,
                    "content field \"\(name)\" cannot travel with a \(control.kind.rawValue) control message, which shows nothing")
            }
        case .update(let id):
            if let notificationID, !notificationID.utf8.elementsEqual(id.utf8) {  // by code points (§1)
                throw SealedPushError(
                    .malformedContent, "an update's \"notification-id\" must equal the \"id\" of its control member")
            }
        }
    }

    private func validate() throws {
        if let notificationID, !NotificationControl.isNotificationID(notificationID) {
            throw SealedPushError(
                .malformedContent, "notification id must be 1 to 64 bytes of UTF-8 without control characters")
        }
        try control?.validate()
        try validateControl()
        if let badge, badge < 0 || badge > Int(Int32.max) {
            throw SealedPushError(.malformedContent, "badge \(badge) is outside 0...2147483647")
        }
        if let relevanceScore, !(relevanceScore >= 0 && relevanceScore <= 1) {
            throw SealedPushError(.malformedContent, "relevance score \(relevanceScore) is outside 0...1")
        }
        if let data, !Self.allNumbersFinite(data) {
            throw SealedPushError(.malformedContent, "app data contains a number that is not finite")
        }
        if let contentReference, !Self.isAttachmentShape(contentReference) {
            throw SealedPushError(.malformedContent, "the content reference must be a JSON object with a \"url\" string (spec §4.3)")
        }
        if let attachments, !attachments.allSatisfy(Self.isAttachmentShape) {
            throw SealedPushError(.malformedContent, "every attachment must be a JSON object with a \"url\" string (spec §4.2)")
        }
        for (name, value) in additionalMembers {
            guard !Self.isKnown(name) else {
                throw SealedPushError(
                    .malformedContent, "additional member \"\(name)\" is a known content member; set its property instead")
            }
            guard Self.allNumbersFinite(value) else {
                throw SealedPushError(.malformedContent, "additional member \"\(name)\" contains a number that is not finite")
            }
            guard 1 + Self.depth(value) <= 32 else {
                throw SealedPushError(.malformedContent, "additional member \"\(name)\" nests deeper than the 32 levels receivers accept")
            }
        }

        // Spec §4: receivers reject nesting deeper than 32 levels (the top-level object is level 1), so a sender
        // must not produce it.
        if let data, 1 + Self.depth(data) > 32 {
            throw SealedPushError(
                .malformedContent, "app data nests \(Self.depth(data)) levels; at most 31 fit in the content object")
        }
        if let attachments, 2 + (attachments.map(Self.depth).max() ?? 0) > 32 {
            throw SealedPushError(.malformedContent, "attachments nest deeper than the 32 levels receivers accept")
        }
    }

    /// The nesting depth of a value: 0 for a scalar, 1 + the deepest member for an array or object.
    private static func depth(_ value: JSONValue) -> Int {
        switch value {
        case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
        case .object(let members): 1 + (members.values.map(depth).max() ?? 0)
        default: 0
        }
    }

    /// The known member names. They compare by code points (RFC 8259 §8.3, UTF-8 bytes), not by Swift's canonical
    /// equivalence; comparing the views allocates nothing (this runs for every member of every content opened).
    private static let knownNames: [String] = CodingKeys.allCases.map(\.rawValue)

    private static func isKnown(_ name: String) -> Bool { knownNames.contains { $0.utf8.elementsEqual(name.utf8) } }

    /// What every receiver checks of an attachment (spec §4.2): an object with a `url` string. The rest of the
    /// descriptor is checked only by receivers that process attachments (``AttachmentDescriptor``).
    private static func isAttachmentShape(_ value: JSONValue) -> Bool {
        value.objectValue?["url"]?.stringValue != nil
    }

    private static func allNumbersFinite(_ value: JSONValue) -> Bool {
        switch value {
        case .number(let number): number.isFinite
        case .array(let elements): elements.allSatisfy(allNumbersFinite)
        case .object(let members): members.values.allSatisfy(allNumbersFinite)
        default: true
        }
    }
}
