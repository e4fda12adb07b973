import SealedPushCore

/// FCM's rules for a send request (`POST /v1/projects/{project}/messages:send`), as its `ErrorCode` reference and
/// `Specs/fcm-v1.md` §3 describe them.
enum FCMMessageValidator {
    /// The largest request body read (a message is at most a few KB).
    static let maximumBodyBytes = 64 * 1024
    /// Registration token characters.
    static let messageMembers: Set<String> = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "token", "topic", "condition",
    ]
    static let androidMembers: Set<String> = [
        "collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification", "fcm_options",
        "direct_boot_ok",
    ]

    enum Outcome {
        case accepted(RecordedFCMMessage, validateOnly: Bool)
        case rejected(status: Int, body: [UInt8])
    }


    /// Why FCM refuses a data key, or nil.
    static func isReserved(dataKey key: String) -> Bool {
        let lower = key.lowercased()
        return lower == "from" || lower == "gcm" || lower.hasPrefix("google")
    }

    static func unknownName(_ name: String, at path: String?) -> Outcome {
        let description = path.map { "Invalid JSON payload received. Unknown name \"\(name)\" at '\($0)': Cannot find field." }
            ?? "Invalid JSON payload received. Unknown name \"\(name)\": Cannot find field."
        return .rejected(status: 400, body: FCMErrorBody.badRequest(field: path, description: description))
    }

    static func invalidValue(_ path: String, type: String, _ value: JSONValue) -> Outcome {
        var writer = JSONWriter()
        writer.value(value)
        let shown = String(decoding: writer.bytes.prefix(100), as: UTF8.self)
        return .rejected(
            status: 400, body: FCMErrorBody.badRequest(field: path, description: "Invalid value at '\(path)' (\(type)), \(shown)"))
    }

    /// Validates a parsed request body.
    static func validate(body bytes: [UInt8], isUnregistered: (String) -> Bool) -> Outcome {
        guard let document = try? JSONParser.parse(bytes, maxDepth: 32, errorCode: .invalidArgument),
            case .object(let top) = document
        else {
            return .rejected(
                status: 400,
                body: FCMErrorBody.badRequest(field: nil, description: "Invalid JSON payload received. Unexpected token."))
        }
        var validateOnly = false
        for (name, value) in top {
            switch name {
            case "message": break
            case "validate_only", "validateOnly":
                guard case .bool(let flag) = value else { return invalidValue(name, type: "TYPE_BOOL", value) }
                validateOnly = flag
            default: return unknownName(name, at: nil)
            }
        }
        guard case .object(let message)? = top["message"] else {
            return .rejected(
                status: 400,
                body: FCMErrorBody.invalidArgument(
                    "Request contains an invalid argument.", field: "message", description: "message is required"))
        }
        for (name, _) in message where !messageMembers.contains(name) { return unknownName(name, at: "message") }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else {
            let text = targets.isEmpty ? "Recipient of the message is not set." : "Exactly one of token, topic or condition must be set."
            return .rejected(status: 400, body: FCMErrorBody.invalidArgument(text, field: "message", description: text))
        }
        var token: String?
        if let value = message["token"] {
            guard case .string(let text) = value else { return invalidValue("message.token", type: "TYPE_STRING", value) }
            guard FCMRegistrationToken.isWellFormed(text) else {  // the gateway's registration rule
                return .rejected(
                    status: 400,
                    body: FCMErrorBody.invalidArgument("The registration token is not a valid FCM registration token"))
            }
            token = text
        }
        var data: [(key: String, value: String)] = []
        if let value = message["data"] {
            guard case .object(let members) = value else { return invalidValue("message.data", type: "TYPE_MAP", value) }
            for (index, (key, member)) in members.enumerated() {
                guard case .string(let text) = member else {
                    return invalidValue("message.data[\(index)].value", type: "TYPE_STRING", member)
                }
                if isReserved(dataKey: key) {
                    return .rejected(
                        status: 400,
                        body: FCMErrorBody.invalidArgument(
                            "Invalid data payload key: \(key)", field: "message.data",
                            description: "Invalid data payload key: \(key)"))
                }
                data.append((key: key, value: text))
            }
        }
        let size = FCMPayload.dataSize(data)
        guard size <= FCMPayload.maxDataBytes else {
            return .rejected(
                status: 400,
                body: FCMErrorBody.invalidArgument(
                    "Message is too big: the data is \(size) bytes; the limit is \(FCMPayload.maxDataBytes)"))
        }
        var priority: String?
        var ttl: String?
        var collapseKey: String?
        if let value = message["android"] {
            guard case .object(let android) = value else { return invalidValue("message.android", type: "TYPE_MESSAGE", value) }
            for (name, _) in android where !androidMembers.contains(name) { return unknownName(name, at: "message.android") }
            if let value = android["priority"] {
                guard case .string(let text) = value, ["high", "normal", "HIGH", "NORMAL"].contains(text) else {
                    return invalidValue(
                        "message.android.priority", type: "type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority",
                        value)
                }
                priority = text.lowercased()
            }
            if let value = android["ttl"] {
                guard case .string(let text) = value, let seconds = parseDuration(text) else {
                    return invalidValue("message.android.ttl", type: "type.googleapis.com/google.protobuf.Duration", value)
                }
                guard seconds <= Double(FCMMessage.maximumTTLSeconds) else {
                    return .rejected(
                        status: 400,
                        body: FCMErrorBody.invalidArgument(
                            "TTL must be between 0 and 2419200 seconds (28 days)", field: "message.android.ttl",
                            description: "TTL \(text) is over 28 days"))
                }
                ttl = text
            }
            if let value = android["collapse_key"] {
                guard case .string(let text) = value else {
                    return invalidValue("message.android.collapse_key", type: "TYPE_STRING", value)
                }
                collapseKey = text
            }
        }
        if let token, isUnregistered(token) {
            return .rejected(status: 404, body: FCMErrorBody.forStatus(404))
        }
        let record = RecordedFCMMessage(
            token: token, data: data, priority: priority, ttl: ttl, collapseKey: collapseKey,
            hasNotification: message["notification"] != nil, body: bytes)
        return .accepted(record, validateOnly: validateOnly)
    }

    /// A `google.protobuf.Duration` JSON string: seconds with up to 9 fraction digits and a final `s`.
    static func parseDuration(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCII),
            whole.allSatisfy(\.isNumber)
        else { return nil }
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                return nil
            }
        }
        return Double(number)
    }
}
