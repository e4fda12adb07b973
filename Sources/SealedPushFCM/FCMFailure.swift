import SealedPushCore

/// Why a send failed, mapped from FCM's `google.rpc.Status` answer (`Specs/fcm-v1.md` §6) or from the transport.
public struct FCMFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure, and so what a sender does.
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        /// The stable name.
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// 404 `UNREGISTERED`: the token is gone; end the device.
        public static let unregistered = Reason("unregistered")
        /// 403 `SENDER_ID_MISMATCH`: the token belongs to another project; end the device.
        public static let senderIDMismatch = Reason("senderIdMismatch")
        /// 400 `INVALID_ARGUMENT` about the registration token: malformed; end the device (like `BadDeviceToken`).
        public static let invalidToken = Reason("invalidToken")
        /// 400 `INVALID_ARGUMENT` about anything else: fail the job with the message.
        public static let invalidArgument = Reason("invalidArgument")
        /// 429 `QUOTA_EXCEEDED`: retried.
        public static let quotaExceeded = Reason("quotaExceeded")
        /// 503 `UNAVAILABLE`: retried.
        public static let unavailable = Reason("unavailable")
        /// 500 `INTERNAL`: retried.
        public static let `internal` = Reason("internal")
        /// 401 `THIRD_PARTY_AUTH_ERROR`: configuration error.
        public static let thirdPartyAuthError = Reason("thirdPartyAuthError")
        /// 401 without `FcmError` twice in a row, or the token endpoint refused the assertion: configuration error.
        public static let unauthenticated = Reason("unauthenticated")
        /// 403 `PERMISSION_DENIED`: the account may not send for the project; configuration error.
        public static let permissionDenied = Reason("permissionDenied")
        /// Refused before sending: over the data budget (`payloadTooLarge` with the numbers).
        public static let payloadTooLarge = Reason("payloadTooLarge")
        /// No answer by the deadline.
        public static let timeout = Reason("timeout")
        /// The connection failed or closed before an answer.
        public static let connection = Reason("connection")
        /// Any other answer.
        public static let other = Reason("other")
    }

    /// The kind.
    public let reason: Reason
    /// The HTTP status, if FCM answered.
    public let status: Int?
    /// The answer's error code (`FcmError.errorCode`, else `status`), if any.
    public let errorCode: String?
    /// A message a person can act on (FCM's own message when it gave one). Never contains the message body.
    public let message: String

    /// Creates a failure.
    public init(reason: Reason, status: Int?, errorCode: String?, message: String) {
        self.reason = reason
        self.status = status
        self.errorCode = errorCode
        self.message = message
    }

    /// Whether the device is gone or its token unusable: stop sending to it.
    public var endsDevice: Bool { [.unregistered, .senderIDMismatch, .invalidToken].contains(reason) }

    /// Whether the app's FCM configuration is wrong: stop this app's sends and report loudly, no retries.
    public var isConfigurationError: Bool {
        [.thirdPartyAuthError, .unauthenticated, .permissionDenied].contains(reason)
    }

    /// Whether a later attempt may succeed.
    public var isRetryable: Bool { [.quotaExceeded, .unavailable, .internal, .timeout, .connection].contains(reason) }

    public var description: String {
        "FCM \(reason.name)" + (status.map { " (HTTP \($0)" + (errorCode.map { " \($0)" } ?? "") + ")" } ?? "")
            + ": \(message)"
    }

    /// Maps an error answer (`Specs/fcm-v1.md` §6).
    /// - Parameters:
    ///   - status: The HTTP status (not 200).
    ///   - body: The answer body.
    /// - Returns: The failure.
    public static func from(status: Int, body: [UInt8]) -> FCMFailure {
        var canonical: String?
        var fcmCode: String?
        var message = "HTTP \(status)"
        var tokenField = false
        if case .object(let top)? = try? JSONParser.parse(body, maxDepth: 32, errorCode: .malformedPayload),
            case .object(let error)? = top["error"]
        {
            canonical = error["status"]?.stringValue
            if let text = error["message"]?.stringValue { message = String(text.prefix(500)) }
            for detail in error["details"]?.arrayValue ?? [] {
                let type = detail["@type"]?.stringValue
                if type == "type.googleapis.com/google.firebase.fcm.v1.FcmError", fcmCode == nil {
                    fcmCode = detail["errorCode"]?.stringValue
                }
                if type == "type.googleapis.com/google.rpc.BadRequest" {
                    for violation in detail["fieldViolations"]?.arrayValue ?? [] {
                        if violation["field"]?.stringValue == "message.token" { tokenField = true }
                    }
                }
            }
        }
        let code = fcmCode ?? canonical ?? derivedCode(status)
        let reason: Reason
        switch (code, status) {
        case ("UNREGISTERED", _): reason = .unregistered
        case ("SENDER_ID_MISMATCH", _): reason = .senderIDMismatch
        case ("QUOTA_EXCEEDED", _), ("RESOURCE_EXHAUSTED", _): reason = .quotaExceeded
        case ("UNAVAILABLE", _): reason = .unavailable
        case ("INTERNAL", _): reason = .internal
        case ("THIRD_PARTY_AUTH_ERROR", _), ("APNS_AUTH_ERROR", _): reason = .thirdPartyAuthError
        case ("INVALID_ARGUMENT", _):
            reason = tokenField || message == "The registration token is not a valid FCM registration token"
                ? .invalidToken : .invalidArgument
        case ("UNAUTHENTICATED", _), (_, 401): reason = .unauthenticated
        case ("PERMISSION_DENIED", _): reason = .permissionDenied
        case (_, 429): reason = .quotaExceeded
        case (_, 503): reason = .unavailable
        case (_, 500): reason = .internal
        case (_, 404): reason = .unregistered
        default: reason = .other
        }
        return FCMFailure(reason: reason, status: status, errorCode: code, message: message)
    }

    static func derivedCode(_ status: Int) -> String {
        switch status {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 403: "SENDER_ID_MISMATCH"
        case 404: "UNREGISTERED"
        case 429: "QUOTA_EXCEEDED"
        case 500: "INTERNAL"
        case 503: "UNAVAILABLE"
        default: "UNSPECIFIED_ERROR"
        }
    }
}
