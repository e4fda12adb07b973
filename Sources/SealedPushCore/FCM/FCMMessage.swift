/// One FCM HTTP v1 send request carrying an envelope (`Specs/fcm-v1.md` §2): a data-only message to one token.
///
/// ``body()`` emits the exact request body; there is no way to add a `notification` block.
public struct FCMMessage: Sendable, Hashable {
    /// The longest `android.ttl`: 28 days, FCM's maximum and the envelope's longest lifetime.
    public static let maximumTTLSeconds: UInt64 = EnvelopeV1.maxLifetime
    /// The longest collapse key, in bytes (the same bound as `apns-collapse-id`).
    public static let maximumCollapseKeyBytes = 64

    /// The device's FCM registration token.
    public var token: String
    /// The data members: `sp` first, then configured extra members (never derived from content).
    public var data: [(key: String, value: String)] {
        [(key: FCMPayload.envelopeKey, value: envelopeText)] + extraData
    }
    /// `b64url(envelope)`.
    public var envelopeText: String
    /// Configured extra data members, fixed by the sender's configuration.
    public var extraData: [(key: String, value: String)]
    /// `android.priority`.
    public var priority: FCMPriority
    /// `android.ttl` in seconds (0 ... 2,419,200).
    public var ttlSeconds: UInt64
    /// `android.collapse_key`, which must not reveal content.
    public var collapseKey: String?

    /// Creates a message from an envelope.
    /// - Parameters:
    ///   - token: The FCM registration token.
    ///   - envelope: The envelope bytes.
    ///   - ttlSeconds: The remaining lifetime `max(0, expiresAt − now)`.
    ///   - priority: Default `.high`.
    ///   - collapseKey: Default none.
    ///   - extraData: Configured extra data members (default none).
    public init(
        token: String, envelope: [UInt8], ttlSeconds: UInt64, priority: FCMPriority = .high,
        collapseKey: String? = nil, extraData: [(key: String, value: String)] = []
    ) {
        self.init(
            token: token, envelopeText: Base64URL.encode(envelope), ttlSeconds: ttlSeconds, priority: priority,
            collapseKey: collapseKey, extraData: extraData)
    }

    /// Creates a message from an envelope's text.
    /// - Parameters:
    ///   - token: The FCM registration token.
    ///   - envelopeText: `b64url(envelope)`.
    ///   - ttlSeconds: The remaining lifetime.
    ///   - priority: Default `.high`.
    ///   - collapseKey: Default none.
    ///   - extraData: Configured extra data members (default none).
    public init(
        token: String, envelopeText: String, ttlSeconds: UInt64, priority: FCMPriority = .high,
        collapseKey: String? = nil, extraData: [(key: String, value: String)] = []
    ) {
        self.token = token
        self.envelopeText = envelopeText
        self.ttlSeconds = ttlSeconds
        self.priority = priority
        self.collapseKey = collapseKey
        self.extraData = extraData
    }

    /// The remaining lifetime of an envelope at `now`, for ``ttlSeconds``.
    /// - Parameters:
    ///   - expiresAt: The envelope's `expiresAt`.
    ///   - now: The current time, UNIX seconds.
    /// - Returns: `max(0, expiresAt − now)`, capped at ``maximumTTLSeconds``.
    public static func ttl(expiresAt: UInt64, now: UInt64) -> UInt64 {
        expiresAt > now ? min(expiresAt - now, maximumTTLSeconds) : 0
    }

    /// `android.ttl` as FCM's duration string, for example `"3600s"`.
    public var ttlText: String { "\(ttlSeconds)s" }

    /// ``FCMPayload/dataSize(_:)-(Sequence<(key:String,value:String)>)`` of ``data``.
    public var dataSize: Int { FCMPayload.dataSize(data) }

    /// The checks made before anything is sent: token, data budget, ttl, collapse key, extra members.
    /// - Throws: ``SealedPushError``: `payloadTooLarge` (with the bytes needed and the limit) or `invalidArgument`.
    public func validate() throws {
        guard !token.isEmpty else { throw SealedPushError(.invalidArgument, "the FCM registration token is empty") }
        guard ttlSeconds <= Self.maximumTTLSeconds else {
            throw SealedPushError(
                .invalidArgument, "android.ttl must be 0 ... \(Self.maximumTTLSeconds) seconds (28 days), got \(ttlSeconds)")
        }
        if let collapseKey, collapseKey.isEmpty || collapseKey.utf8.count > Self.maximumCollapseKeyBytes {
            throw SealedPushError(
                .invalidArgument,
                "the collapse key must be 1 ... \(Self.maximumCollapseKeyBytes) bytes, got \(collapseKey.utf8.count)")
        }
        for (key, _) in extraData {
            if let reason = Self.reservedKeyReason(key) {
                throw SealedPushError(.invalidArgument, "extra data member \"\(key.prefix(40))\": \(reason)")
            }
        }
        try FCMPayload.checkBudget(dataSize)
    }

    /// Why FCM refuses a data key, or nil if it accepts it: `from`, `gcm`, keys starting with `google`, the envelope
    /// key (which the sender owns) and the empty key.
    /// - Parameter key: A data member's name.
    /// - Returns: The reason, or nil.
    public static func reservedKeyReason(_ key: String) -> String? {
        if key.isEmpty { return "a data key must not be empty" }
        if key == FCMPayload.envelopeKey { return "\"\(FCMPayload.envelopeKey)\" carries the envelope" }
        if key == "from" || key == "gcm" || key.hasPrefix("google") {
            return "FCM reserves \"from\", \"gcm\" and keys starting with \"google\""
        }
        return nil
    }

    /// The exact HTTP v1 request body (`Specs/fcm-v1.md` §2).
    /// - Returns: `{"message":{"token":…,"data":{"sp":…},"android":{"priority":…,"ttl":…[,"collapse_key":…]}}}`.
    public func body() -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{\"message\":{\"token\":")
        writer.string(token)
        writer.raw(",\"data\":{")
        var first = true
        for (key, value) in data {
            if !first { writer.raw(",") }
            first = false
            writer.string(key)
            writer.raw(":")
            writer.string(value)
        }
        writer.raw("},\"android\":{\"priority\":")
        writer.string(priority.rawValue)
        writer.raw(",\"ttl\":")
        writer.string(ttlText)
        if let collapseKey {
            writer.raw(",\"collapse_key\":")
            writer.string(collapseKey)
        }
        writer.raw("}}}")
        return writer.bytes
    }

    public static func == (lhs: FCMMessage, rhs: FCMMessage) -> Bool {
        lhs.token == rhs.token && lhs.envelopeText == rhs.envelopeText && lhs.priority == rhs.priority
            && lhs.ttlSeconds == rhs.ttlSeconds && lhs.collapseKey == rhs.collapseKey
            && lhs.extraData.map(\.key) == rhs.extraData.map(\.key)
            && lhs.extraData.map(\.value) == rhs.extraData.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(token)
        hasher.combine(envelopeText)
        hasher.combine(ttlSeconds)
    }
}
