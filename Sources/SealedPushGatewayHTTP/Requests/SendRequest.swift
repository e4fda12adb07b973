import SealedPushCore

/// The body of `POST /v1/apps/{appId}/notifications` (`SendRequest`), validated, and its `Idempotency-Key`.
struct SendRequest {
    /// The most devices one send names.
    static let maxDevices = 1_000
    /// The default ttl: one day.
    static let defaultTTL = 86_400
    /// The longest ttl: 28 days (envelope spec's maximum lifetime).
    static let maxTTL = 2_419_200

    /// The recipient device ids, in the request's order, no repeats.
    var devices: [String]
    /// Recipient users: each one's sendable devices, in the request's order, no repeats.
    var users: [String]
    /// The content, validated by Core's strict parser (envelope spec §4).
    var content: NotificationContent
    /// Seconds the notification stays deliverable.
    var ttl: Int
    /// `apns-priority`.
    var priority: Int
    /// `apns-collapse-id`, when the backend chose one.
    var collapseID: String?
    /// The placeholder, when the backend chose one (else the gateway's default).
    var placeholder: Placeholder?
    /// Files to encrypt once and attach for every recipient.
    var attachments: [AttachmentSource]

    /// Parses and validates a body.
    /// - Parameter body: The request body.
    /// - Throws: ``GatewayAPIError``: `malformedRequest` (400) for a shape error; `invalidArgument` (422) for a value
    ///   out of range; `malformedContent` (422, field `content` or `content.NAME`) for content a receiver would
    ///   reject. Messages never echo content.
    /// - Parameters:
    ///   - body: The request body.
    ///   - update: True for the body of `POST …/notifications/{id}/update` (`UpdateRequest`): no recipients (the
    ///     original's devices), no `collapseId` (the original's).
    init(body: [UInt8], update: Bool = false) throws {
        let fields = try JSONFields(body: body)
        if update {
            try fields.rejectUnknown(["content", "ttl", "priority", "placeholder", "attachments"])
            devices = []
            users = []
        } else {
            try fields.rejectUnknown([
                "devices", "users", "content", "ttl", "priority", "collapseId", "placeholder", "attachments",
            ])
            devices = try Self.identifiers(fields.array("devices"), name: "devices", kind: "device")
            users = try Self.identifiers(fields.array("users"), name: "users", kind: "user")
            guard !devices.isEmpty || !users.isEmpty else {
                throw GatewayAPIError.invalid("name at least one recipient in devices or users", field: "devices")
            }
        }

        let contentFields = try fields.object("content", required: true)!
        // The gateway names every notification itself (its id, `Specs/control-v1.md` §1) and sends control messages
        // from their own operations, where it knows which devices got what. Either member is refused whatever its
        // value, before the content is validated: well formed or not, it has to go.
        if contentFields.members["notification-id"] != nil {
            throw GatewayAPIError.invalid(
                "content must not carry notification-id: the gateway sets it to the notification's id (answered "
                    + "with 202), which DELETE …/notifications/{id} and POST …/notifications/{id}/update use",
                field: "content.notification-id")
        }
        if contentFields.members["control"] != nil {
            throw GatewayAPIError.invalid(
                "content must not carry control: withdraw with DELETE …/notifications/{id}, edit with POST "
                    + "…/notifications/{id}/update, set the badge with POST …/badge",
                field: "content.control")
        }
        content = try Self.content(contentFields)

        ttl = try fields.integer("ttl") ?? Self.defaultTTL
        guard (1...Self.maxTTL).contains(ttl) else {
            throw GatewayAPIError.invalid("ttl must be 1 to \(Self.maxTTL) seconds (28 days)", field: "ttl")
        }
        priority = try fields.integer("priority") ?? 10
        guard [1, 5, 10].contains(priority) else {
            throw GatewayAPIError.invalid("priority must be 1, 5 or 10", field: "priority")
        }
        collapseID = try fields.string("collapseId")
        if let collapseID {
            guard (1...64).contains(collapseID.utf8.count), !collapseID.unicodeScalars.contains(where: Self.isControl)
            else {
                throw GatewayAPIError.invalid(
                    "collapseId must be 1 to 64 bytes without control characters", field: "collapseId")
            }
        }
        placeholder = try fields.object("placeholder").map(Self.placeholder)

        attachments = []
        if let items = try fields.array("attachments") {
            guard items.count <= AttachmentSource.maxCount else {
                throw GatewayAPIError.invalid(
                    "attachments has \(items.count) items; a send carries at most \(AttachmentSource.maxCount)",
                    field: "attachments")
            }
            for (index, item) in items.enumerated() {
                guard case .object(let members) = item else {
                    throw GatewayAPIError.malformed("attachments[\(index)] must be an object", field: "attachments[\(index)]")
                }
                attachments.append(try AttachmentSource(JSONFields(members: members, path: "attachments[\(index)]"), index: index))
            }
        }
    }

    /// A request built by the gateway itself (withdraw's removal, badge): recipients and content given.
    init(devices: [String], users: [String], content: NotificationContent, ttl: Int, priority: Int) {
        self.devices = devices
        self.users = users
        self.content = content
        self.ttl = ttl
        self.priority = priority
        self.collapseID = nil
        self.placeholder = nil
        self.attachments = []
    }

    /// A list of ids (`devices` or `users`): strings, valid identifiers, no repeats, at most ``maxDevices``.
    static func identifiers(_ elements: [JSONValue]?, name: String, kind: String) throws -> [String] {
        guard let elements else { return [] }
        guard !elements.isEmpty else { throw GatewayAPIError.invalid("\(name) must not be empty", field: name) }
        guard elements.count <= Self.maxDevices else {
            throw GatewayAPIError.invalid(
                "\(name) names \(elements.count) \(kind)s; a send names at most \(Self.maxDevices)", field: name)
        }
        var seen = Set<String>()
        var ids: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let id) = element else {
                throw GatewayAPIError.malformed("\(name)[\(index)] must be a string", field: "\(name)[\(index)]")
            }
            guard Identifier.isValid(id) else {
                throw GatewayAPIError.invalid(
                    "\(name)[\(index)] is not a \(kind) id (1 to 128 of A-Z a-z 0-9 . _ ~ -)", field: "\(name)[\(index)]")
            }
            guard seen.insert(id).inserted else {
                throw GatewayAPIError.invalid("\(name)[\(index)] repeats an earlier \(kind)", field: "\(name)[\(index)]")
            }
            ids.append(id)
        }
        return ids
    }

    /// Content through Core's strict parser; the error names the member, never its value.
    private static func content(_ fields: JSONFields) throws -> NotificationContent {
        var writer = JSONWriter()
        writer.value(.object(fields.members))
        var bytes = writer.bytes
        defer { for index in bytes.indices { bytes[index] = 0 } }
        do {
            let content = try NotificationContent(json: bytes)
            _ = try content.canonicalJSON()  // what the sealer will encode: refuse here what it would refuse
            return content
        } catch let error as SealedPushError {
            throw GatewayAPIError(
                .unprocessableContent, "malformedContent", "content is not valid (envelope spec §4): \(error.message)",
                field: contentField(error.message))
        }
    }

    /// `content.NAME` when Core's message names the member (`content field "badge" …`), else `content`.
    private static func contentField(_ message: String) -> String {
        guard let start = message.range(of: "content field \""),
            let end = message[start.upperBound...].firstIndex(of: "\"")
        else { return "content" }
        return "content." + message[start.upperBound..<end]
    }

    /// The `Placeholder` schema: `body` (and optional `title`) or `locKey` (and optional `locArgs`), `sound`.
    private static func placeholder(_ fields: JSONFields) throws -> Placeholder {
        try fields.rejectUnknown(["title", "body", "locKey", "locArgs", "sound"])
        func bounded(_ name: String, _ limit: Int) throws -> String? {
            guard let text = try fields.string(name) else { return nil }
            guard text.count <= limit else {
                throw GatewayAPIError.invalid(
                    "\(fields.path(of: name)) is over \(limit) characters", field: fields.path(of: name))
            }
            return text
        }
        let title = try bounded("title", 256)
        let body = try bounded("body", 1024)
        let locKey = try bounded("locKey", 256)
        let sound = try bounded("sound", 256)
        let locArgElements = try fields.array("locArgs")
        var locArgs: [String]?
        if let locArgElements {
            guard locArgElements.count <= 16 else {
                throw GatewayAPIError.invalid("placeholder.locArgs has more than 16 items", field: "placeholder.locArgs")
            }
            locArgs = try locArgElements.enumerated().map { index, element in
                guard case .string(let text) = element else {
                    throw GatewayAPIError.malformed(
                        "placeholder.locArgs[\(index)] must be a string", field: "placeholder.locArgs[\(index)]")
                }
                return text
            }
        }
        switch (body, locKey) {
        case (let body?, nil) where locArgs == nil:
            return .text(title: title, body: body, sound: sound)
        case (nil, let locKey?) where title == nil:
            return .localized(key: locKey, args: locArgs ?? [], sound: sound)
        default:
            throw GatewayAPIError.invalid(
                "placeholder needs either body (and an optional title) or locKey (and optional locArgs)",
                field: "placeholder")
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
