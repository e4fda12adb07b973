import Foundation

/// One message the emulator accepted.
public struct RecordedFCMMessage: Sendable, Hashable {
    /// `message.token` (nil for a topic or condition).
    public let token: String?
    /// `message.data`, in the order sent.
    public let dataKeys: [String]
    /// The data values, parallel to ``dataKeys``.
    public let dataValues: [String]
    /// `message.android.priority`, lowercased, if given.
    public let priority: String?
    /// `message.android.ttl`, if given.
    public let ttl: String?
    /// `message.android.collapse_key`, if given.
    public let collapseKey: String?
    /// Whether the message had a `notification` member (a SealedPush sender never sends one).
    public let hasNotification: Bool
    /// The request body as received.
    public let body: [UInt8]

    init(
        token: String?, data: [(key: String, value: String)], priority: String?, ttl: String?, collapseKey: String?,
        hasNotification: Bool, body: [UInt8]
    ) {
        self.token = token
        self.dataKeys = data.map(\.key)
        self.dataValues = data.map(\.value)
        self.priority = priority
        self.ttl = ttl
        self.collapseKey = collapseKey
        self.hasNotification = hasNotification
        self.body = body
    }

    /// The data as a dictionary.
    public var data: [String: String] { Dictionary(zip(dataKeys, dataValues), uniquingKeysWith: { $1 }) }
}
