import Foundation

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
    /// If set, each accepted body is written to `DIR/<token>/<apns-id>.json`.
    public var recordDirectory: String?
    /// Whether a new token minted less than 20 minutes after the current one gets 429
    /// `TooManyProviderTokenUpdates`.
    public var enforceTokenUpdateInterval: Bool
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
        self.enforceTokenUpdateInterval = true
        self.idleTimeout = nil
        self.threads = 1
        self.clock = { Date() }
    }
}
