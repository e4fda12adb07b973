import Foundation
import SealedPushAPNsEmulator

/// How an ``FCMEmulator`` listens, whom it trusts, what it accepts and which faults it injects.
public struct FCMEmulatorConfiguration: Sendable {
    /// A service account the token endpoint accepts assertions from.
    public struct Account: Sendable, Hashable {
        /// `client_email`: the assertion's `iss`.
        public var clientEmail: String
        /// The RSA public key (PEM) its assertions must verify against (or the private key PEM, whose public half
        /// is used).
        public var publicKeyPEM: String
        /// The project its access tokens may send for.
        public var projectID: String

        /// Creates an account.
        /// - Parameters:
        ///   - clientEmail: `client_email`.
        ///   - publicKeyPEM: The RSA public key PEM.
        ///   - projectID: The project it may send for.
        public init(clientEmail: String, publicKeyPEM: String, projectID: String) {
            self.clientEmail = clientEmail
            self.publicKeyPEM = publicKeyPEM
            self.projectID = projectID
        }
    }

    /// The address to bind: a loopback address only.
    public var host: String
    /// The port; 0 picks a free one (read ``FCMEmulator/port`` after start).
    public var port: Int
    /// Where to write the generated self-signed certificate (PEM) at start; nil = don't.
    public var certificateOutputPath: String?
    /// The accounts whose assertions the token endpoint accepts.
    public var accounts: [Account]
    /// The token endpoint's path (the service-account file's `token_uri` is `https://HOST:PORT` + this).
    public var tokenPath: String
    /// `expires_in` of issued access tokens (default 3,600 s).
    public var accessTokenLifetime: Int
    /// Registration tokens that are gone: 404 `UNREGISTERED`.
    public var unregisteredTokens: Set<String>
    /// Per send request, the probability that its (well-formed) registration token becomes unregistered at that
    /// moment (404 `UNREGISTERED` now and for every later send to it).
    public var unregisterProbability: Double
    /// Faults for send requests (after authentication): `.status(429|500|503, reason:)` answer FCM's error body
    /// for that status (429 and 503 with `Retry-After`), `.connectionReset`/`.goAway` close the connection,
    /// `.slow` delays, `.noResponse` never answers.
    public var faults: EmulatorFaultPlan
    /// The `Retry-After` seconds sent with 429 and 503 (default 1).
    public var retryAfterSeconds: Int
    /// How many accepted messages the recorder holds, newest last (default 10,000, the APNs emulator's bound).
    public var recordedMessagesLimit: Int
    /// A directory to write each accepted message's `data` map to, as the app's `RemoteMessage.getData()` would
    /// see it: `DIR/<token's first 24 characters>/<n>.json` (mode 0600, n counting from 1); nil writes nothing.
    public var recordDirectory: String?
    /// For how many distinct envelopes (the most recent) the recorder counts acceptances (default 100,000).
    public var trackedEnvelopes: Int
    /// The most access tokens held at once (default 100,000); expired ones go first.
    public var maximumAccessTokens: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS announced to HTTP/2 clients.
    public var maxConcurrentStreams: Int
    /// After this many streams on one HTTP/2 connection, the emulator sends GOAWAY (`NO_ERROR`, the last stream
    /// id that one) and keeps the connection open, as Google's front ends rotate connections: later streams on it
    /// are refused, and a client must open a new connection. nil (the default): no limit.
    public var streamsPerConnection: Int?
    /// The `RST_STREAM` frames a client may send on one connection within 30 s before the emulator ends the
    /// connection with GOAWAY `ENHANCE_YOUR_CALM` (default 100,000), as servers defending against HTTP/2 rapid reset
    /// (CVE-2023-44487) do.
    public var maximumStreamResets: Int
    /// Event-loop threads.
    public var threads: Int
    /// The emulator's clock.
    public var clock: @Sendable () -> Date

    /// Creates a configuration.
    /// - Parameters:
    ///   - accounts: The service accounts it trusts.
    ///   - host: A loopback address (default `127.0.0.1`).
    ///   - port: Default 0 (any free port).
    public init(accounts: [Account], host: String = "127.0.0.1", port: Int = 0) {
        self.host = host
        self.port = port
        self.certificateOutputPath = nil
        self.accounts = accounts
        self.tokenPath = "/token"
        self.accessTokenLifetime = 3600
        self.unregisteredTokens = []
        self.unregisterProbability = 0
        self.faults = .none
        self.retryAfterSeconds = 1
        self.recordedMessagesLimit = 10_000
        self.recordDirectory = nil
        self.trackedEnvelopes = 100_000
        self.maximumAccessTokens = 100_000
        self.maxConcurrentStreams = 1000
        self.streamsPerConnection = nil
        self.maximumStreamResets = 100_000
        self.threads = 1
        self.clock = { Date() }
    }
}
