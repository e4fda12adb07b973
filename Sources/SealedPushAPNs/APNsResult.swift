import Foundation

/// A reason a notification was not delivered: Apple's `reason` string, or one of the client's own (for failures
/// detected before sending or in transport, where ``APNsFailure/status`` is nil).
public struct APNsReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason string.
    public let rawValue: String

    /// Wraps a reason string (any string Apple sends is kept as is).
    /// - Parameter rawValue: The reason.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    // Apple's reasons (status in parentheses).
    /// (400) The device token is malformed or not for this environment.
    public static let badDeviceToken = APNsReason(rawValue: "BadDeviceToken")
    /// (400) The collapse id is too long.
    public static let badCollapseID = APNsReason(rawValue: "BadCollapseId")
    /// (400) The expiration is invalid.
    public static let badExpirationDate = APNsReason(rawValue: "BadExpirationDate")
    /// (400) The apns-id is not a UUID.
    public static let badMessageID = APNsReason(rawValue: "BadMessageId")
    /// (400) The priority is invalid.
    public static let badPriority = APNsReason(rawValue: "BadPriority")
    /// (400) The topic is invalid.
    public static let badTopic = APNsReason(rawValue: "BadTopic")
    /// (400) The token does not match the topic.
    public static let deviceTokenNotForTopic = APNsReason(rawValue: "DeviceTokenNotForTopic")
    /// (400) The push type is missing or invalid.
    public static let invalidPushType = APNsReason(rawValue: "InvalidPushType")
    /// (400) No topic.
    public static let missingTopic = APNsReason(rawValue: "MissingTopic")
    /// (400) The body is empty.
    public static let payloadEmpty = APNsReason(rawValue: "PayloadEmpty")
    /// (400) The topic is not allowed.
    public static let topicDisallowed = APNsReason(rawValue: "TopicDisallowed")
    /// (403) The provider token is stale (older than an hour).
    public static let expiredProviderToken = APNsReason(rawValue: "ExpiredProviderToken")
    /// (403) The provider token is invalid (signature, key id, team id).
    public static let invalidProviderToken = APNsReason(rawValue: "InvalidProviderToken")
    /// (403) No provider token.
    public static let missingProviderToken = APNsReason(rawValue: "MissingProviderToken")
    /// (404) Bad path.
    public static let badPath = APNsReason(rawValue: "BadPath")
    /// (405) Not POST.
    public static let methodNotAllowed = APNsReason(rawValue: "MethodNotAllowed")
    /// (410) The device token is no longer active: prune it.
    public static let unregistered = APNsReason(rawValue: "Unregistered")
    /// (413) The body exceeds 4096 bytes.
    public static let payloadTooLarge = APNsReason(rawValue: "PayloadTooLarge")
    /// (429) Tokens are updated too often.
    public static let tooManyProviderTokenUpdates = APNsReason(rawValue: "TooManyProviderTokenUpdates")
    /// (429) Too many requests to the same device.
    public static let tooManyRequests = APNsReason(rawValue: "TooManyRequests")
    /// (500) Internal server error.
    public static let internalServerError = APNsReason(rawValue: "InternalServerError")
    /// (503) Service unavailable.
    public static let serviceUnavailable = APNsReason(rawValue: "ServiceUnavailable")

    // The client's own (status nil).
    /// No answer arrived before the deadline. The notification may or may not have been delivered.
    public static let timeout = APNsReason(rawValue: "Timeout")
    /// Connecting or the connection failed on every allowed attempt.
    public static let transportFailure = APNsReason(rawValue: "TransportFailure")
    /// The provider token could not be signed.
    public static let providerTokenFailure = APNsReason(rawValue: "ProviderTokenFailure")
    /// The bulk payload builder threw.
    public static let payloadBuildFailed = APNsReason(rawValue: "PayloadBuildFailed")
    /// The client was shut down.
    public static let clientShutdown = APNsReason(rawValue: "ClientShutdown")
    /// The response could not be understood.
    public static let badResponse = APNsReason(rawValue: "BadResponse")
}

/// Why a notification was not delivered.
public struct APNsFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's reason, or the client's.
    public let reason: APNsReason
    /// The HTTP status APNs answered, or nil if the failure happened before or without an answer.
    public let status: Int?
    /// For 410 `Unregistered`: since when the token is invalid (from the body's `timestamp`, milliseconds).
    public let timestamp: Date?
    /// Details (never payload content or credentials).
    public let message: String

    /// Creates a failure.
    /// - Parameters:
    ///   - reason: The reason.
    ///   - status: The HTTP status, if APNs answered.
    ///   - timestamp: The 410 timestamp, if any.
    ///   - message: Details.
    public init(reason: APNsReason, status: Int?, timestamp: Date? = nil, message: String = "") {
        self.reason = reason
        self.status = status
        self.timestamp = timestamp
        self.message = message
    }

    public var description: String {
        var text = status.map { "\($0) \(reason)" } ?? "\(reason)"
        if let timestamp { text += " since \(timestamp)" }
        if !message.isEmpty { text += ": \(message)" }
        return text
    }
}

/// How one notification ended. Every notification ends in exactly one result.
public enum APNsResult: Sendable, Hashable {
    /// APNs accepted it (HTTP 200) with this `apns-id`.
    case delivered(apnsID: UUID)
    /// It was not delivered.
    case failed(APNsFailure)

    /// Whether it was delivered.
    public var isDelivered: Bool {
        if case .delivered = self { return true }
        return false
    }

    /// The failure, if any.
    public var failure: APNsFailure? {
        if case .failed(let failure) = self { return failure }
        return nil
    }
}

/// The result of sending one notification, with what it took.
public struct APNsSendReport: Sendable, Hashable {
    /// The notification's `apns-id`.
    public let apnsID: UUID
    /// The device.
    public let deviceToken: DeviceToken
    /// Delivered or failed.
    public let result: APNsResult
    /// Requests made (1 when it went through at once; 0 when rejected before sending).
    public let attempts: Int
    /// True when it was resent after a request that may have reached APNs without an answer (connection lost
    /// after the request was written, stream not refused by GOAWAY). APNs could then show it twice.
    public let possibleDuplicate: Bool
    /// The reason of each attempt that failed transiently, in order (retried by the client, or the last one when
    /// it gave up): APNs's reason for a 429, 500 or 503 (`TooManyRequests`, `InternalServerError`,
    /// `ServiceUnavailable`…), `NotProcessed` (refused, or above a GOAWAY's last-stream-id: never processed),
    /// `ConnectionLost` (reset or GOAWAY after the request was written), `ConnectFailed`, `Timeout`. Empty when the
    /// first attempt settled it.
    public var transientFailures: [String] = []
}

/// A device token APNs reported as no longer registered (410): remove it from your records.
public struct APNsUnregisteredToken: Sendable, Hashable {
    /// The token.
    public let deviceToken: DeviceToken
    /// Since when APNs considers it invalid.
    public let timestamp: Date?
    /// The notification that revealed it.
    public let apnsID: UUID
}
