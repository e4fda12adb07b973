import Foundation
import SealedPushAPNs
import SealedPushCore
import SealedPushFCM
import SealedPushGateway
import SealedPushServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `delivery` section of `gateway.json`: how `serve` sends queued jobs to APNs and FCM (a ``DeliveryService``).
///
/// ```json
/// "delivery": {
///   "enabled": true,
///   "nodeId": "gw-1",
///   "productionURL": "https://api.push.apple.com",
///   "sandboxURL": "https://api.development.push.apple.com",
///   "trustRootsFile": null,
///   "fcmURL": "https://fcm.googleapis.com",
///   "fcmTrustFile": null,
///   "proxy": null,
///   "proxyCredentialsFile": null,
///   "maxConnections": 2,
///   "maxConcurrentSends": 128,
///   "requestTimeoutSeconds": 10,
///   "apnsDeadlineSeconds": 60,
///   "leaseSeconds": 90,
///   "shutdownGraceSeconds": 20,
///   "retentionSeconds": 604800,
///   "heartbeatSeconds": 2,
///   "nodeStaleSeconds": 10,
///   "appRefreshSeconds": 30,
///   "retryAttempts": 8,
///   "retryInitialSeconds": 5,
///   "retryMaxSeconds": 300,
///   "webhook": {
///     "url": "https://backend.example.com/hooks/sealedpush", "secretFile": "webhook.secret",
///     "maxAttempts": 8, "maxConcurrent": 4, "caFile": null
///   }
/// }
/// ```
///
/// Every member is optional; a missing section means delivery on, with these defaults. The node id defaults to the
/// host name: nodes sharing one PostgreSQL database need distinct ids. `trustRootsFile` (PEM) replaces the system's
/// roots, for an APNs emulator or a TLS-inspecting proxy; `fcmTrustFile` (one PEM certificate) is the only one trusted
/// for FCM and its token endpoint, for the FCM emulator. `proxy` (`http://host:port`) sends every APNs, FCM and
/// FCM-token connection through that HTTP proxy's `CONNECT` tunnel (``ProviderProxy``); when the proxy wants a user
/// and password they live in `proxyCredentialsFile` (`user:password`, mode 0600), never in the URL. The webhook
/// secret lives in its own file (mode 0600, at least 16 bytes; a final newline is ignored), never in this file. The
/// webhook's `maxAttempts` (1...20, default 8) and `maxConcurrent` (1...64, default 4) set its delivery policy
/// (``UnregisteredWebhookConfiguration``); `caFile` (PEM, at least one certificate, checked at start) replaces the
/// system's roots for an `https` webhook URL, for a receiver behind a private CA. Events still held at SIGTERM get
/// `shutdownGraceSeconds` to be delivered.
///
/// Environment overrides (each replaces the file's value when set and not empty):
/// `SEALEDPUSH_GATEWAY_DELIVERY` (`on` or `off`), `SEALEDPUSH_GATEWAY_NODE_ID`,
/// `SEALEDPUSH_GATEWAY_APNS_PRODUCTION_URL`, `SEALEDPUSH_GATEWAY_APNS_SANDBOX_URL`,
/// `SEALEDPUSH_GATEWAY_APNS_TRUST_ROOTS` (a PEM file), `SEALEDPUSH_GATEWAY_FCM_URL`,
/// `SEALEDPUSH_GATEWAY_FCM_TRUST` (a PEM file), `SEALEDPUSH_GATEWAY_PROXY`, `SEALEDPUSH_GATEWAY_PROXY_CREDENTIALS_FILE`,
/// `SEALEDPUSH_GATEWAY_WEBHOOK_URL` with
/// `SEALEDPUSH_GATEWAY_WEBHOOK_SECRET_FILE`.
public struct GatewayDeliverySettings: Sendable, Hashable, Codable {
    /// The signed webhook told about unregistered devices and receipts.
    public struct Webhook: Sendable, Hashable, Codable {
        /// The `http(s)://` URL events are posted to.
        public var url: String
        /// The file holding the shared secret (0600).
        public var secretFile: String
        /// Attempts per event, 1...20; nil for the default (8).
        public var maxAttempts: Int?
        /// Events posted at once, 1...64; nil for the default (4).
        public var maxConcurrent: Int?
        /// A PEM file of the certificates trusted for an `https` URL instead of the system's roots; nil for those.
        public var caFile: String?

        /// Creates the webhook section.
        public init(
            url: String, secretFile: String, maxAttempts: Int? = nil, maxConcurrent: Int? = nil, caFile: String? = nil
        ) {
            self.url = url
            self.secretFile = secretFile
            self.maxAttempts = maxAttempts
            self.maxConcurrent = maxConcurrent
            self.caFile = caFile
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case url, secretFile, maxAttempts, maxConcurrent, caFile
        }
    }

    /// Whether `serve` delivers at all (off: the API accepts and queues; another node delivers).
    public var enabled: Bool
    /// This node's lease owner id; nil for the host name.
    public var nodeID: String?
    /// Where production tokens go.
    public var productionURL: String
    /// Where sandbox tokens go.
    public var sandboxURL: String
    /// A PEM file of trusted roots; nil for the system's.
    public var trustRootsFile: String?
    /// Where FCM is (`https://host[:port]`).
    public var fcmURL: String
    /// A PEM file with the one certificate to trust for FCM and its token endpoint; nil for the system's roots.
    public var fcmTrustFile: String?
    /// An HTTP proxy (`http://host:port`, no credentials) every provider connection tunnels through; nil for none.
    public var proxy: String?
    /// A file (0600) holding the proxy's `user:password`, when it asks for them.
    public var proxyCredentialsFile: String?
    /// Connections per app and environment, 1...64.
    public var maxConnections: Int
    /// Sends in flight on this node, 1...10,000.
    public var maxConcurrentSends: Int
    /// How long one APNs request may wait for its answer.
    public var requestTimeoutSeconds: Double
    /// The most time one notification may take at APNs, retries included.
    public var apnsDeadlineSeconds: Double
    /// How long a claimed job is this node's; at least `apnsDeadlineSeconds` + 10.
    public var leaseSeconds: Double
    /// On SIGTERM, how long sends in flight may finish.
    public var shutdownGraceSeconds: Double
    /// How long a notification is kept after it expired (status, sealed bodies, idempotency key), and a given-up
    /// webhook event after it was given up; 0 keeps all.
    public var retentionSeconds: Int
    /// How often the node refreshes its heartbeat in the store (default 2 s; 0.1...60).
    public var heartbeatSeconds: Double
    /// How old another process's heartbeat must be before this node id may be taken over from it when that process
    /// cannot be proven gone (default 10 s; at least twice `heartbeatSeconds`, at most 3600). A shorter value lets a
    /// restart on another machine take over sooner; a value too close to the heartbeat lets a briefly stalled
    /// process (a long GC-free pause, a suspended VM) be taken for dead.
    public var nodeStaleSeconds: Double
    /// How long delivery keeps an app's record before reading it again (default 30 s; 0...3600): an operator's
    /// change of APNs or FCM credentials (`app set-apns`, `app set-fcm`) reaches running nodes within it, no restart.
    public var appRefreshSeconds: Double
    /// How many times a job is tried when each try fails transiently (429, 500, 503, a lost connection, a timeout)
    /// once the client's own quick retries are spent, before it ends `failed` (default 8; 1...100).
    public var retryAttempts: Int
    /// How long a job put back waits before its first retry (default 5 s; 0.1...3600); each further retry waits twice
    /// as long as the one before, up to ``retryMaxSeconds``, each wait drawn between half and all of it.
    public var retryInitialSeconds: Double
    /// The longest wait between two tries of a job (default 300 s; at least ``retryInitialSeconds``, at most 86400).
    public var retryMaxSeconds: Double
    /// The unregistered-device webhook, if any.
    public var webhook: Webhook?

    /// Apple's production service.
    public static let appleProductionURL = "https://api.push.apple.com"
    /// Apple's sandbox service.
    public static let appleSandboxURL = "https://api.development.push.apple.com"
    /// Google's FCM service.
    public static let googleFCMURL = "https://fcm.googleapis.com"

    /// Creates the section with its defaults.
    public init() {
        enabled = true
        nodeID = nil
        productionURL = Self.appleProductionURL
        sandboxURL = Self.appleSandboxURL
        trustRootsFile = nil
        fcmURL = Self.googleFCMURL
        fcmTrustFile = nil
        proxy = nil
        proxyCredentialsFile = nil
        maxConnections = 2
        maxConcurrentSends = 128
        requestTimeoutSeconds = 10
        apnsDeadlineSeconds = 60
        leaseSeconds = 90
        shutdownGraceSeconds = 20
        retentionSeconds = 7 * 86_400
        heartbeatSeconds = 2
        nodeStaleSeconds = 10
        appRefreshSeconds = 30
        retryAttempts = 8
        retryInitialSeconds = 5
        retryMaxSeconds = 300
        webhook = nil
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case enabled, nodeID = "nodeId", productionURL, sandboxURL, trustRootsFile, fcmURL, fcmTrustFile, maxConnections
        case maxConcurrentSends, proxy, proxyCredentialsFile
        case requestTimeoutSeconds, apnsDeadlineSeconds, leaseSeconds, shutdownGraceSeconds, retentionSeconds, webhook
        case heartbeatSeconds, nodeStaleSeconds, appRefreshSeconds, retryAttempts, retryInitialSeconds, retryMaxSeconds
    }

    /// The section's keys (what ``ConfigurationKeyCheck`` accepts).
    static let knownKeys = CodingKeys.allCases.map(\.stringValue)
    /// The webhook section's keys.
    static let knownWebhookKeys = Webhook.CodingKeys.allCases.map(\.stringValue)

    public init(from decoder: any Decoder) throws {
        let defaults = GatewayDeliverySettings()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? defaults.enabled
        nodeID = try container.decodeIfPresent(String.self, forKey: .nodeID)
        productionURL = try container.decodeIfPresent(String.self, forKey: .productionURL) ?? defaults.productionURL
        sandboxURL = try container.decodeIfPresent(String.self, forKey: .sandboxURL) ?? defaults.sandboxURL
        trustRootsFile = try container.decodeIfPresent(String.self, forKey: .trustRootsFile)
        fcmURL = try container.decodeIfPresent(String.self, forKey: .fcmURL) ?? defaults.fcmURL
        fcmTrustFile = try container.decodeIfPresent(String.self, forKey: .fcmTrustFile)
        proxy = try container.decodeIfPresent(String.self, forKey: .proxy)
        proxyCredentialsFile = try container.decodeIfPresent(String.self, forKey: .proxyCredentialsFile)
        maxConnections = try container.decodeIfPresent(Int.self, forKey: .maxConnections) ?? defaults.maxConnections
        maxConcurrentSends =
            try container.decodeIfPresent(Int.self, forKey: .maxConcurrentSends) ?? defaults.maxConcurrentSends
        requestTimeoutSeconds =
            try container.decodeIfPresent(Double.self, forKey: .requestTimeoutSeconds) ?? defaults.requestTimeoutSeconds
        apnsDeadlineSeconds =
            try container.decodeIfPresent(Double.self, forKey: .apnsDeadlineSeconds) ?? defaults.apnsDeadlineSeconds
        leaseSeconds = try container.decodeIfPresent(Double.self, forKey: .leaseSeconds) ?? defaults.leaseSeconds
        shutdownGraceSeconds =
            try container.decodeIfPresent(Double.self, forKey: .shutdownGraceSeconds) ?? defaults.shutdownGraceSeconds
        retentionSeconds =
            try container.decodeIfPresent(Int.self, forKey: .retentionSeconds) ?? defaults.retentionSeconds
        webhook = try container.decodeIfPresent(Webhook.self, forKey: .webhook)
        heartbeatSeconds =
            try container.decodeIfPresent(Double.self, forKey: .heartbeatSeconds) ?? defaults.heartbeatSeconds
        nodeStaleSeconds =
            try container.decodeIfPresent(Double.self, forKey: .nodeStaleSeconds) ?? defaults.nodeStaleSeconds
        appRefreshSeconds =
            try container.decodeIfPresent(Double.self, forKey: .appRefreshSeconds) ?? defaults.appRefreshSeconds
        retryAttempts = try container.decodeIfPresent(Int.self, forKey: .retryAttempts) ?? defaults.retryAttempts
        retryInitialSeconds =
            try container.decodeIfPresent(Double.self, forKey: .retryInitialSeconds) ?? defaults.retryInitialSeconds
        retryMaxSeconds = try container.decodeIfPresent(Double.self, forKey: .retryMaxSeconds) ?? defaults.retryMaxSeconds
    }

    /// Applies the environment's overrides.
    /// - Throws: ``GatewayConfigurationError`` naming the variable.
    mutating func applyOverrides(_ value: (String) -> String?) throws {
        if let text = value("SEALEDPUSH_GATEWAY_DELIVERY") {
            switch text.lowercased() {
            case "on", "true", "1": enabled = true
            case "off", "false", "0": enabled = false
            default: throw GatewayConfigurationError("SEALEDPUSH_GATEWAY_DELIVERY must be on or off (got \(text))")
            }
        }
        if let id = value("SEALEDPUSH_GATEWAY_NODE_ID") { nodeID = id }
        if let url = value("SEALEDPUSH_GATEWAY_APNS_PRODUCTION_URL") { productionURL = url }
        if let url = value("SEALEDPUSH_GATEWAY_APNS_SANDBOX_URL") { sandboxURL = url }
        if let file = value("SEALEDPUSH_GATEWAY_APNS_TRUST_ROOTS") { trustRootsFile = file }
        if let url = value("SEALEDPUSH_GATEWAY_FCM_URL") { fcmURL = url }
        if let file = value("SEALEDPUSH_GATEWAY_FCM_TRUST") { fcmTrustFile = file }
        if let url = value("SEALEDPUSH_GATEWAY_PROXY") { proxy = url }
        if let file = value("SEALEDPUSH_GATEWAY_PROXY_CREDENTIALS_FILE") { proxyCredentialsFile = file }
        switch (value("SEALEDPUSH_GATEWAY_WEBHOOK_URL"), value("SEALEDPUSH_GATEWAY_WEBHOOK_SECRET_FILE")) {
        case (let url?, let file?):  // the file's other webhook settings stay
            webhook = Webhook(
                url: url, secretFile: file, maxAttempts: webhook?.maxAttempts, maxConcurrent: webhook?.maxConcurrent,
                caFile: webhook?.caFile)
        case (nil, nil): break
        default:
            throw GatewayConfigurationError(
                "set both SEALEDPUSH_GATEWAY_WEBHOOK_URL and SEALEDPUSH_GATEWAY_WEBHOOK_SECRET_FILE, or neither")
        }
    }

    /// Makes relative file paths absolute against `base`.
    mutating func resolvePaths(against base: String) {
        func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : base + "/" + path }
        if let file = trustRootsFile { trustRootsFile = resolve(file) }
        if let file = fcmTrustFile { fcmTrustFile = resolve(file) }
        if let file = proxyCredentialsFile { proxyCredentialsFile = resolve(file) }
        if let file = webhook?.secretFile { webhook?.secretFile = resolve(file) }
        if let file = webhook?.caFile { webhook?.caFile = resolve(file) }
    }

    /// Checks the settings (endpoints, limits, lease against deadline) without reading any file.
    /// - Throws: ``GatewayConfigurationError`` naming the setting.
    func validate() throws {
        _ = try deliveryConfiguration(readingSecrets: false)
    }

    /// The delivery service's configuration: endpoints parsed, limits checked, the webhook secret read.
    /// - Parameter readingSecrets: Whether to read the webhook secret file (off for a form-only check).
    /// - Throws: ``GatewayConfigurationError`` naming the setting or the file.
    func deliveryConfiguration(readingSecrets: Bool = true) throws -> DeliveryConfiguration {
        func endpoint(_ url: String, _ name: String) throws -> APNsEndpoint {
            do { return try APNsEndpoint(url: url) } catch let error as SealedPushError {
                throw GatewayConfigurationError("delivery.\(name): \(error.message)")
            }
        }
        func seconds(_ value: Double, _ name: String, _ range: ClosedRange<Double>) throws -> Duration {
            guard value.isFinite, range.contains(value) else {
                throw GatewayConfigurationError(
                    "delivery.\(name) must be \(range.lowerBound)...\(range.upperBound) seconds (got \(value))")
            }
            return .milliseconds(Int64((value * 1000).rounded()))
        }
        let node = nodeID ?? Self.hostName()
        guard !node.isEmpty, node.utf8.count <= 200 else {
            throw GatewayConfigurationError("delivery.nodeId must be 1-200 bytes (got \(node.utf8.count))")
        }
        guard (1...64).contains(maxConnections) else {
            throw GatewayConfigurationError("delivery.maxConnections must be 1...64 (got \(maxConnections))")
        }
        guard (1...10_000).contains(maxConcurrentSends) else {
            throw GatewayConfigurationError("delivery.maxConcurrentSends must be 1...10000 (got \(maxConcurrentSends))")
        }
        let production = try endpoint(productionURL, "productionURL")
        var client = APNsClientConfiguration(endpoint: production, trustRoots: trustRootsFile.map { .pemFile($0) } ?? .system)
        client.maxConnections = maxConnections
        client.requestTimeout = try seconds(requestTimeoutSeconds, "requestTimeoutSeconds", 0.1...600)
        client.deadline = try seconds(apnsDeadlineSeconds, "apnsDeadlineSeconds", 0.1...3600)
        var configuration = DeliveryConfiguration(nodeID: node, client: client)
        configuration.productionEndpoint = production
        configuration.sandboxEndpoint = try endpoint(sandboxURL, "sandboxURL")
        var fcmTrust: String?
        if let fcmTrustFile, readingSecrets {
            guard let data = FileManager.default.contents(atPath: fcmTrustFile), data.count <= 1 << 20 else {
                throw GatewayConfigurationError("delivery.fcmTrustFile \(fcmTrustFile) cannot be read (or is over 1 MiB)")
            }
            fcmTrust = String(decoding: data, as: UTF8.self)
        }
        do {
            let (fcm, path) = try FCMEndpoint.parse(fcmURL, trustedCertificatePEM: fcmTrust)
            guard path.isEmpty || path == "/" else {
                throw GatewayConfigurationError("delivery.fcmURL must be https://host[:port] with no path (got \(fcmURL))")
            }
            configuration.fcmEndpoint = fcm
        } catch let error as SealedPushError {
            throw GatewayConfigurationError("delivery.fcmURL: \(error.message)")
        }
        configuration.fcmRequestTimeout = client.requestTimeout
        configuration.maxConcurrentSends = maxConcurrentSends
        configuration.leaseDuration = try seconds(leaseSeconds, "leaseSeconds", 1...86_400)
        guard configuration.leaseDuration >= client.deadline + DeliveryConfiguration.leaseMargin else {
            throw GatewayConfigurationError(
                "delivery.leaseSeconds (\(leaseSeconds)) must be at least apnsDeadlineSeconds (\(apnsDeadlineSeconds)) "
                    + "+ 10, or a slow send could lose its lease")
        }
        configuration.shutdownGracePeriod = try seconds(shutdownGraceSeconds, "shutdownGraceSeconds", 0...3600)
        configuration.nodeHeartbeatInterval = try seconds(heartbeatSeconds, "heartbeatSeconds", 0.1...60)
        configuration.nodeStaleAfter = try seconds(nodeStaleSeconds, "nodeStaleSeconds", 0.2...3600)
        configuration.appRefreshInterval = try seconds(appRefreshSeconds, "appRefreshSeconds", 0...3600)
        guard nodeStaleSeconds >= heartbeatSeconds * 2 else {
            throw GatewayConfigurationError(
                "delivery.nodeStaleSeconds (\(nodeStaleSeconds)) must be at least twice delivery.heartbeatSeconds "
                    + "(\(heartbeatSeconds)), or a live node could be taken for dead between two heartbeats")
        }
        guard retentionSeconds == 0 || retentionSeconds >= 86_400 else {
            throw GatewayConfigurationError(
                "delivery.retentionSeconds must be 0 (keep everything) or at least 86400 (one day: idempotency keys "
                    + "are honoured 24 hours), got \(retentionSeconds)")
        }
        configuration.retention = retentionSeconds == 0 ? nil : .seconds(retentionSeconds)
        guard (1...100).contains(retryAttempts) else {
            throw GatewayConfigurationError("delivery.retryAttempts must be 1...100 (got \(retryAttempts))")
        }
        let initial = try seconds(retryInitialSeconds, "retryInitialSeconds", 0.1...3600)
        let longest = try seconds(retryMaxSeconds, "retryMaxSeconds", 0.1...86_400)
        guard longest >= initial else {
            throw GatewayConfigurationError(
                "delivery.retryMaxSeconds (\(retryMaxSeconds)) must be at least delivery.retryInitialSeconds "
                    + "(\(retryInitialSeconds))")
        }
        configuration.jobRetry = APNsRetryPolicy(maxAttempts: retryAttempts, initialBackoff: initial, maxBackoff: longest)
        if let trustRootsFile, readingSecrets {
            guard FileManager.default.isReadableFile(atPath: trustRootsFile) else {
                throw GatewayConfigurationError("delivery.trustRootsFile \(trustRootsFile) cannot be read")
            }
        }
        configuration.proxy = try providerProxy(readingSecrets: readingSecrets)
        configuration.webhook = try webhookConfiguration(readingSecrets: readingSecrets)
        return configuration
    }

    /// The proxy provider connections tunnel through (its credentials read from their file), or nil.
    /// - Parameter readingSecrets: Whether to read the credentials file (off for a form-only check).
    /// - Throws: ``GatewayConfigurationError`` naming the setting or the file.
    func providerProxy(readingSecrets: Bool = true) throws -> ProviderProxy? {
        guard let proxy else {
            if proxyCredentialsFile != nil {
                throw GatewayConfigurationError("delivery.proxyCredentialsFile is set but delivery.proxy is not")
            }
            return nil
        }
        let parsed: ProviderProxy
        do { parsed = try ProviderProxy(url: proxy) } catch let error as SealedPushError {
            throw GatewayConfigurationError("delivery.proxy: \(error.message)")
        }
        guard parsed.username == nil else {
            throw GatewayConfigurationError(
                "delivery.proxy must not hold a user or password (\(parsed)): put user:password in a file of its "
                    + "own, mode 0600, named by delivery.proxyCredentialsFile")
        }
        guard let file = proxyCredentialsFile, readingSecrets else { return parsed }
        var bytes = try Self.readSecret(file, setting: "delivery.proxyCredentialsFile")
        defer { Sodium.wipe(&bytes) }
        do {
            return try parsed.withCredentials(fromFile: bytes)
        } catch let error as SealedPushError {
            throw GatewayConfigurationError("delivery.proxyCredentialsFile \(file): \(error.message)")
        }
    }

    /// The webhook's configuration (its secret read from its file), or nil when there is none.
    /// - Parameter readingSecrets: Whether to read the secret file (off for a form-only check).
    /// - Throws: ``GatewayConfigurationError`` naming the setting or the file.
    func webhookConfiguration(readingSecrets: Bool = true) throws -> UnregisteredWebhookConfiguration? {
        guard let webhook else { return nil }
        guard let url = URL(string: webhook.url) else {
            throw GatewayConfigurationError("delivery.webhook.url is not a URL")
        }
        var secret =
            readingSecrets
            ? try Self.readSecret(webhook.secretFile, setting: "delivery.webhook.secretFile")
            : [UInt8](repeating: 0x61, count: 16)
        defer { Sodium.wipe(&secret) }
        var configuration: UnregisteredWebhookConfiguration
        do {
            configuration = try UnregisteredWebhookConfiguration(url: url, secret: secret)
        } catch let error as SealedPushError {
            throw GatewayConfigurationError("delivery.webhook: \(error.message)")
        }
        if let attempts = webhook.maxAttempts {
            guard UnregisteredWebhookConfiguration.attemptsRange.contains(attempts) else {
                throw GatewayConfigurationError("delivery.webhook.maxAttempts must be 1...20 (got \(attempts))")
            }
            configuration.maxAttempts = attempts
        }
        if let concurrent = webhook.maxConcurrent {
            guard UnregisteredWebhookConfiguration.concurrencyRange.contains(concurrent) else {
                throw GatewayConfigurationError("delivery.webhook.maxConcurrent must be 1...64 (got \(concurrent))")
            }
            configuration.maxConcurrent = concurrent
        }
        if shutdownGraceSeconds.isFinite, shutdownGraceSeconds >= 0 {  // range checked with the section
            configuration.drainDeadline = .milliseconds(Int64((min(shutdownGraceSeconds, 3600) * 1000).rounded()))
        }
        if let caFile = webhook.caFile, readingSecrets {
            guard let data = FileManager.default.contents(atPath: caFile), data.count <= 1 << 20 else {
                throw GatewayConfigurationError("delivery.webhook.caFile \(caFile) cannot be read (or is over 1 MiB)")
            }
            let pem = String(decoding: data, as: UTF8.self)
            do { _ = try UnregisteredWebhookConfiguration.checkTrustRoots(pem: pem) } catch let error as SealedPushError {
                throw GatewayConfigurationError("delivery.webhook.caFile \(caFile) \(error.message)")
            }
            configuration.trustRootsPEM = pem
        }
        return configuration
    }

    /// Reads a secret file (the webhook's secret, the proxy's credentials): a regular file, not a symlink, readable
    /// by its owner only; a final newline dropped.
    /// - Parameters:
    ///   - path: The file.
    ///   - setting: The setting that names it, for the errors.
    static func readSecret(_ path: String, setting: String) throws -> [UInt8] {
        var bytes: [UInt8]
        do {
            bytes = try KeyFile.readPrivate(path: path, limit: 4096, what: setting)
        } catch let error as SealedPushError {
            throw GatewayConfigurationError(error.message)
        }
        while let last = bytes.last, last == 0x0A || last == 0x0D {
            bytes[bytes.count - 1] = 0
            bytes.removeLast()
        }
        return bytes
    }

    /// The host name, the default node id.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "gateway" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "gateway" : name
    }
}
