import SealedPushCore

/// Typed access to the members of a request's JSON object, each error naming the member's path.
///
/// Type errors and unknown members are `400 malformedRequest` (not the JSON of this operation); values out of
/// range are left to the caller (`422`). Messages name paths and expected types only, never values.
struct JSONFields {
    /// The object's members.
    let members: JSONObject
    /// The path of this object in the request (`""` for the top level, `"registration"` for a nested one).
    let path: String

    /// Parses a request body as one JSON object.
    /// - Parameter bytes: The body.
    /// - Throws: ``GatewayAPIError`` `malformedRequest` for anything but a JSON object (strict RFC 8259 parsing:
    ///   duplicate names, lone surrogates and over-deep nesting are refused).
    init(body bytes: [UInt8]) throws {
        let value: JSONValue
        do {
            // Content may nest 32 levels (envelope spec §4) inside the request's own object.
            value = try JSONParser.parse(bytes, maxDepth: 34, errorCode: .malformedPayload)
        } catch let error as SealedPushError {
            throw GatewayAPIError.malformed("the body is not valid JSON: \(error.message)")
        }
        guard case .object(let members) = value else {
            throw GatewayAPIError.malformed("the body must be a JSON object")
        }
        self.init(members: members, path: "")
    }

    init(members: JSONObject, path: String) {
        self.members = members
        self.path = path
    }

    /// The path of a member of this object.
    func path(of name: String) -> String { path.isEmpty ? name : path + "." + name }

    /// Refuses members not in `known` (`additionalProperties: false`), naming the nearest known member when it is
    /// a likely misspelling (`contnet`: did you mean `content`?) and every member known here.
    func rejectUnknown(_ known: Set<String>) throws {
        for (name, _) in members where !known.contains(name) {
            // The name is the request's own key: safe to name (it is not content), but bounded.
            let shown = name.count <= 64 ? name : String(name.prefix(64)) + "…"
            let names = known.sorted()
            var message = "unknown member \"\(path(of: shown))\""
            if let nearest = NearestName.nearest(to: name, among: names),
                NearestName.distance(name, nearest) <= max(2, nearest.count / 3)
            {
                message += "; did you mean \"\(path(of: nearest))\"?"
            }
            message += " (known here: \(names.joined(separator: ", ")))"
            throw GatewayAPIError.malformed(message, field: path(of: shown))
        }
    }

    /// A required member's raw value.
    func required(_ name: String) throws -> JSONValue {
        guard let value = members[name] else {
            throw GatewayAPIError.malformed("\(path(of: name)) is required", field: path(of: name))
        }
        return value
    }

    /// A member's raw value: required (absent is an error) or optional.
    private func lookup(_ name: String, required isRequired: Bool) throws -> JSONValue? {
        if isRequired { return try required(name) }
        return members[name]
    }

    /// A string member, or nil when absent.
    func string(_ name: String, required isRequired: Bool = false) throws -> String? {
        guard let value = try lookup(name, required: isRequired) else { return nil }
        guard case .string(let text) = value else {
            throw GatewayAPIError.malformed("\(path(of: name)) must be a string", field: path(of: name))
        }
        return text
    }

    /// An integer member, or nil when absent.
    func integer(_ name: String, required isRequired: Bool = false) throws -> Int? {
        guard let value = try lookup(name, required: isRequired) else { return nil }
        guard case .number(let number) = value, number == number.rounded(), abs(number) < 9_007_199_254_740_992 else {
            throw GatewayAPIError.malformed("\(path(of: name)) must be an integer", field: path(of: name))
        }
        return Int(number)
    }

    /// An object member, or nil when absent.
    func object(_ name: String, required isRequired: Bool = false) throws -> JSONFields? {
        guard let value = try lookup(name, required: isRequired) else { return nil }
        guard case .object(let object) = value else {
            throw GatewayAPIError.malformed("\(path(of: name)) must be an object", field: path(of: name))
        }
        return JSONFields(members: object, path: path(of: name))
    }

    /// An array member, or nil when absent.
    func array(_ name: String, required isRequired: Bool = false) throws -> [JSONValue]? {
        guard let value = try lookup(name, required: isRequired) else { return nil }
        guard case .array(let elements) = value else {
            throw GatewayAPIError.malformed("\(path(of: name)) must be an array", field: path(of: name))
        }
        return elements
    }
}
