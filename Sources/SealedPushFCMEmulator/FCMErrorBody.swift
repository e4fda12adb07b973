import SealedPushCore

/// FCM's error answers: `google.rpc.Status` JSON with `FcmError` and `BadRequest` details (`Specs/fcm-v1.md` §6).
enum FCMErrorBody {
    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"

    /// `{"error":{"code":…,"message":…,"status":…,"details":[…]}}`.
    static func status(
        _ code: Int, status: String, message: String, fcmError: String? = nil,
        fieldViolation: (field: String?, description: String)? = nil
    ) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{\"error\":{\"code\":")
        writer.number(Double(code))
        writer.raw(",\"message\":")
        writer.string(message)
        writer.raw(",\"status\":")
        writer.string(status)
        if fcmError != nil || fieldViolation != nil {
            writer.raw(",\"details\":[")
            if let fieldViolation {
                writer.raw("{\"@type\":")
                writer.string(badRequestType)
                writer.raw(",\"fieldViolations\":[{")
                if let field = fieldViolation.field {
                    writer.raw("\"field\":")
                    writer.string(field)
                    writer.raw(",")
                }
                writer.raw("\"description\":")
                writer.string(fieldViolation.description)
                writer.raw("}]}")
                if fcmError != nil { writer.raw(",") }
            }
            if let fcmError {
                writer.raw("{\"@type\":")
                writer.string(fcmErrorType)
                writer.raw(",\"errorCode\":")
                writer.string(fcmError)
                writer.raw("}")
            }
            writer.raw("]")
        }
        writer.raw("}}")
        return writer.bytes
    }

    static func unauthenticated() -> [UInt8] {
        status(
            401, status: "UNAUTHENTICATED",
            message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
                + "other valid authentication credential. See "
                + "https://developers.google.com/identity/sign-in/web/devconsole-project.")
    }

    static func invalidArgument(_ message: String, field: String? = nil, description: String? = nil) -> [UInt8] {
        status(
            400, status: "INVALID_ARGUMENT", message: message, fcmError: "INVALID_ARGUMENT",
            fieldViolation: description.map { (field, $0) })
    }

    static func badRequest(field: String?, description: String) -> [UInt8] {
        status(400, status: "INVALID_ARGUMENT", message: description, fieldViolation: (field, description))
    }

    /// The body FCM answers for an injected status fault.
    static func forStatus(_ code: Int) -> [UInt8] {
        switch code {
        case 429:
            return status(
                429, status: "RESOURCE_EXHAUSTED", message: "Quota exceeded for sending messages.",
                fcmError: "QUOTA_EXCEEDED")
        case 500: return status(500, status: "INTERNAL", message: "Internal error encountered.", fcmError: "INTERNAL")
        case 503:
            return status(503, status: "UNAVAILABLE", message: "The service is currently unavailable.", fcmError: "UNAVAILABLE")
        case 404:
            return status(404, status: "NOT_FOUND", message: "Requested entity was not found.", fcmError: "UNREGISTERED")
        case 403:
            return status(
                403, status: "PERMISSION_DENIED", message: "SenderId mismatch", fcmError: "SENDER_ID_MISMATCH")
        case 401:
            return status(
                401, status: "UNAUTHENTICATED", message: "Auth error from APNS or Web Push Service",
                fcmError: "THIRD_PARTY_AUTH_ERROR")
        default:
            return status(code, status: "UNKNOWN", message: "Injected error.", fcmError: "UNSPECIFIED_ERROR")
        }
    }

    /// An OAuth token endpoint error: `{"error":…,"error_description":…}`.
    static func oauth(_ error: String, _ description: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{\"error\":")
        writer.string(error)
        writer.raw(",\"error_description\":")
        writer.string(description)
        writer.raw("}")
        return writer.bytes
    }
}
