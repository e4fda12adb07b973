import SealedPushCore

/// The body of `POST /v1/apps/{appId}/badge` (`BadgeRequest`), validated: who, and the count a sealed `badge`
/// message sets (`Specs/control-v1.md` §2).
struct BadgeRequest {
    /// The recipient device ids, in the request's order, no repeats.
    var devices: [String]
    /// Recipient users: each one's sendable devices.
    var users: [String]
    /// The badge count to set.
    var count: Int
    /// Seconds the message stays deliverable.
    var ttl: Int
    /// `apns-priority`.
    var priority: Int
    /// Sent to iPhones as a background push (`"carrier": "background"`, priority 5) instead of an alert push.
    var background: Bool

    /// Parses and validates a body.
    /// - Parameter body: The request body.
    /// - Throws: ``GatewayAPIError``: `malformedRequest` (400) for a shape error, `invalidArgument` (422) for a value
    ///   out of range.
    init(body: [UInt8]) throws {
        let fields = try JSONFields(body: body)
        try fields.rejectUnknown(["devices", "users", "count", "ttl", "priority", "carrier"])
        devices = try SendRequest.identifiers(fields.array("devices"), name: "devices", kind: "device")
        users = try SendRequest.identifiers(fields.array("users"), name: "users", kind: "user")
        guard !devices.isEmpty || !users.isEmpty else {
            throw GatewayAPIError.invalid("name at least one recipient in devices or users", field: "devices")
        }
        count = try fields.integer("count", required: true)!
        guard (0...Int(Int32.max)).contains(count) else {
            throw GatewayAPIError.invalid("count must be 0 to \(Int(Int32.max))", field: "count")
        }
        ttl = try fields.integer("ttl") ?? SendRequest.defaultTTL
        guard (1...SendRequest.maxTTL).contains(ttl) else {
            throw GatewayAPIError.invalid("ttl must be 1 to \(SendRequest.maxTTL) seconds (28 days)", field: "ttl")
        }
        background = try Carrier.isBackground(fields.string("carrier"), field: "carrier")
        priority = try fields.integer("priority") ?? (background ? 5 : 10)
        guard [1, 5, 10].contains(priority) else {
            throw GatewayAPIError.invalid("priority must be 1, 5 or 10", field: "priority")
        }
        guard !background || priority != 10 else {
            throw GatewayAPIError.invalid(
                "a background push goes at priority 5 or 1 (APNs refuses 10 for content-available alone)",
                field: "priority")
        }
    }
}
