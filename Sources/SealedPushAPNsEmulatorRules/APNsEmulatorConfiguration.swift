import Foundation

/// Where the emulator enforces "no new provider token within 20 minutes".
public enum TokenUpdateScope: String, Sendable, Hashable, CaseIterable {
    /// A connection that switches to a token less than 20 minutes apart from its current one gets 429.
    case connection
    /// Any connection presenting a token less than 20 minutes apart from the key's current one gets 429.
    case key
    /// Not enforced.
    case none
}

/// How an ``APNsEmulator`` listens, what it accepts, and which faults it injects.
public struct APNsEmulatorConfiguration: Sendable {
    /// The address to bind: a loopback address only (`127.0.0.1`, `::1` or `localhost`).
    public var host: String
    /// The port; 0 picks a free one (read it from ``APNsEmulator/port`` after start).
    public var port: Int
    /// Where to write the generated self-signed certificate (PEM) at start, for clients to trust; nil = don't.
    public var certificateOutputPath: String?
    /// The provider's `.p8` (PKCS#8 PEM private key, as Apple issues it) or its PEM public key: tokens are
    /// verified against its public half.
    public var authKeyPEM: String
    /// The key id tokens must name (`kid`).
    public var keyID: String
    /// The team id tokens must name (`iss`).
    public var teamID: String
    /// Topics accepted; nil accepts any non-empty topic. Others get 400 `TopicDisallowed`.
    public var allowedTopics: Set<String>?
    /// Device tokens (lowercase hex) that exist; nil accepts any well-formed token. Others get 400 `BadDeviceToken`.
    public var knownDeviceTokens: Set<String>?
    /// Device tokens (lowercase hex) that are no longer registered, with the time they stopped being valid:
    /// 410 `Unregistered` with that `timestamp` (milliseconds).
    public var unregisteredDeviceTokens: [String: Date]
    /// SETTINGS_MAX_CONCURRENT_STREAMS announced to clients.
    public var maxConcurrentStreams: Int
    /// Faults to inject.
    public var faults: EmulatorFaultPlan
    /// If set, each accepted body is written to `DIR/<token>/<apns-id>.json` (one file per notification: for short
    /// runs; long ones want ``recordFile``).
    public var recordDirectory: String?
    /// If set, the full history on disk: every accepted notification as one JSON line (apns-id, token, topic,
    /// push type, priority, expiration, collapse id, acceptance time, payload), in the order the answers were
    /// written. The file is created (or truncated) at start with mode 0600; a symbolic link is refused.
    public var recordFile: String?
    /// How many accepted notifications the recorder holds per device token, newest last (default 1: APNs itself
    /// keeps only the last one for an offline device). 0 holds none.
    public var recordedNotificationsPerToken: Int
    /// How many accepted notifications the recorder holds in all (default 10,000): those among the last this many
    /// accepted that are also among the last ``recordedNotificationsPerToken`` of their token. Counters count
    /// everything regardless.
    public var recordedNotificationsLimit: Int
    /// For how many distinct `apns-id`s (the most recent) the recorder keeps request and acceptance counts, to
    /// show duplicates (default 100,000; about 0.1 KB each, measured: 11 MB for the full default window).
    public var trackedAPNsIDs: Int
    /// Where a new provider token less than 20 minutes newer (or older) than the current one gets 429
    /// `TooManyProviderTokenUpdates`: per connection (default; separate provider processes each keep their own
    /// token), per key (all connections share one current token), or never.
    public var tokenUpdateScope: TokenUpdateScope
    /// If set, a connection with no open stream for this long gets GOAWAY (`IdleTimeout`) and is closed.
    public var idleTimeout: Duration?
    /// Event-loop threads serving connections.
    public var threads: Int
    /// The emulator's clock (token age, 410 timestamps).
    public var clock: @Sendable () -> Date

    /// Creates a configuration.
    /// - Parameters:
    ///   - authKeyPEM: The provider key (`.p8` text) or its public key PEM.
    ///   - keyID: The 10-character key id.
    ///   - teamID: The 10-character team id.
    ///   - host: A loopback address (default `127.0.0.1`).
    ///   - port: The port (default 0: any free port).
    public init(authKeyPEM: String, keyID: String, teamID: String, host: String = "127.0.0.1", port: Int = 0) {
        self.host = host
        self.port = port
        self.certificateOutputPath = nil
        self.authKeyPEM = authKeyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.allowedTopics = nil
        self.knownDeviceTokens = nil
        self.unregisteredDeviceTokens = [:]
        self.maxConcurrentStreams = 1000
        self.faults = .none
        self.recordDirectory = nil
        self.recordFile = nil
        self.recordedNotificationsPerToken = 1
        self.recordedNotificationsLimit = 10_000
        self.trackedAPNsIDs = 100_000
        self.tokenUpdateScope = .connection
        self.idleTimeout = nil
        self.threads = 1
        self.clock = { Date() }
    }
}
