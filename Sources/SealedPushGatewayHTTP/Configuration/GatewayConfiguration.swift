import Foundation
import Logging
import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// The gateway's configuration file (JSON, written by `sealed-push-gateway init`) with environment overrides.
///
/// ```json
/// {
///   "listen": "127.0.0.1:8080",
///   "database": "sqlite:gateway.sqlite",
///   "maxBodyBytes": 262144,
///   "logLevel": "info",
///   "overflow": { "blobDirectory": "blobs", "urlPrefix": "https://blobs.example.com/" },
///   "delivery": { "nodeId": "gw-1", "maxConcurrentSends": 64 }
/// }
/// ```
///
/// Relative paths are resolved against the file's directory. Apps (topic, team, APNs key path, server identity
/// path) live in the database; private keys stay in their 0600 files, never in this file or the database.
///
/// Environment overrides (each replaces the file's value when set and not empty):
/// - `SEALEDPUSH_GATEWAY_LISTEN`: `host:port` to listen on.
/// - `SEALEDPUSH_GATEWAY_METRICS_LISTEN`: `host:port` to serve `/metrics` on instead of the API's listener.
/// - `SEALEDPUSH_GATEWAY_DATABASE`: `sqlite:PATH` or `postgres://user[:password]@host[:port]/database`.
/// - `SEALEDPUSH_GATEWAY_MAX_BODY_BYTES`: the largest request body in bytes.
/// - `SEALEDPUSH_GATEWAY_LOG_LEVEL`: `trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`.
/// - `SEALEDPUSH_GATEWAY_LOG_FORMAT`: `text` or `json` (one JSON object per line, ``JSONLogHandler``).
/// - `SEALEDPUSH_GATEWAY_TLS_CERTIFICATE` and `SEALEDPUSH_GATEWAY_TLS_KEY`: the API's certificate chain and key
///   files (both needed; ``GatewayTLSSettings``).
/// - `SEALEDPUSH_GATEWAY_BLOB_DIR` and `SEALEDPUSH_GATEWAY_BLOB_URL_PREFIX`: the blob store for content by reference
///   and attachments (both needed); `SEALEDPUSH_GATEWAY_BLOB_LISTEN`: `host:port` where `serve` serves it.
/// - the delivery section's variables (``GatewayDeliverySettings``): `SEALEDPUSH_GATEWAY_DELIVERY`,
///   `SEALEDPUSH_GATEWAY_NODE_ID`, `SEALEDPUSH_GATEWAY_APNS_PRODUCTION_URL`, `SEALEDPUSH_GATEWAY_APNS_SANDBOX_URL`,
///   `SEALEDPUSH_GATEWAY_APNS_TRUST_ROOTS`, `SEALEDPUSH_GATEWAY_WEBHOOK_URL`, `SEALEDPUSH_GATEWAY_WEBHOOK_SECRET_FILE`.
public struct GatewayConfiguration: Sendable, Hashable, Codable {
    /// The gateway's blob store (content by reference, attachments): where blobs are written, the URL prefix they
    /// are served under, optionally the address the gateway serves them on itself, and how attachments given by URL
    /// are fetched.
    public struct Overflow: Sendable, Hashable, Codable {
        /// The blob directory (a `FileSystemBlobStore`).
        public var blobDirectory: String
        /// The `http(s)://` prefix devices fetch blobs from.
        public var urlPrefix: String
        /// `host:port` where `serve` serves the blob directory itself (nil: another server serves it, for example
        /// `sealed-push blobs serve`). Put TLS in front of it for anything but loopback.
        public var listen: String?
        /// Blobs older than this are deleted by the gateway's blob server (default 29 days: the longest ttl, 28
        /// days, plus a day).
        public var maxAgeSeconds: Int
        /// The most time fetching one attachment may take.
        public var fetchTimeoutSeconds: Double
        /// Whether attachments may be fetched from `http://` URLs (default false).
        public var fetchAllowHTTP: Bool
        /// The hosts attachments may be fetched from; nil for any.
        public var fetchAllowedHosts: [String]?
        /// Whether attachment hosts may resolve to loopback, private or link-local addresses (default false).
        ///
        /// Risky: `true` lets any holder of an API key make the gateway fetch from the gateway's own network
        /// (loopback services, RFC 1918 and fc00::/7 hosts, link-local cloud metadata at 169.254.169.254): server-side
        /// request forgery. Only for test rigs, or together with ``fetchAllowedHosts`` naming the internal hosts.
        public var fetchAllowPrivateAddresses: Bool

        /// Creates the section with its defaults.
        public init(blobDirectory: String, urlPrefix: String, listen: String? = nil) {
            self.blobDirectory = blobDirectory
            self.urlPrefix = urlPrefix
            self.listen = listen
            maxAgeSeconds = 29 * 86_400
            fetchTimeoutSeconds = 20
            fetchAllowHTTP = false
            fetchAllowedHosts = nil
            fetchAllowPrivateAddresses = false
        }

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case blobDirectory, urlPrefix, listen, maxAgeSeconds, fetchTimeoutSeconds, fetchAllowHTTP, fetchAllowedHosts
            case fetchAllowPrivateAddresses
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                blobDirectory: try container.decode(String.self, forKey: .blobDirectory),
                urlPrefix: try container.decode(String.self, forKey: .urlPrefix),
                listen: try container.decodeIfPresent(String.self, forKey: .listen))
            maxAgeSeconds = try container.decodeIfPresent(Int.self, forKey: .maxAgeSeconds) ?? maxAgeSeconds
            fetchTimeoutSeconds =
                try container.decodeIfPresent(Double.self, forKey: .fetchTimeoutSeconds) ?? fetchTimeoutSeconds
            fetchAllowHTTP = try container.decodeIfPresent(Bool.self, forKey: .fetchAllowHTTP) ?? fetchAllowHTTP
            fetchAllowedHosts = try container.decodeIfPresent([String].self, forKey: .fetchAllowedHosts)
            fetchAllowPrivateAddresses =
                try container.decodeIfPresent(Bool.self, forKey: .fetchAllowPrivateAddresses) ?? false
        }

        /// The section's keys (what ``ConfigurationKeyCheck`` accepts).
        static let knownKeys = CodingKeys.allCases.map(\.stringValue)

        /// The blob server's address, if the gateway serves blobs itself.
        public func listenAddress() throws -> (host: String, port: Int)? {
            guard let listen else { return nil }
            return try GatewayConfiguration.hostAndPort(listen, setting: "overflow.listen")
        }
    }

    /// `host:port` to listen on.
    public var listen: String
    /// `sqlite:PATH` or a `postgres://` URL.
    public var database: String
    /// The largest request body in bytes.
    public var maxBodyBytes: Int
    /// The log level name.
    public var logLevel: String
    /// How log lines are written: `text` (swift-log's stream format, the default) or `json` (``JSONLogHandler``).
    public var logFormat: String
    /// Content by reference, if configured.
    public var overflow: Overflow?
    /// Delivery to APNs (a missing section means on, with defaults).
    public var delivery: GatewayDeliverySettings
    /// Whether the plain-HTTP API may listen on an address other than loopback, and the webhook URL may be
    /// `http://` (default false: bearer keys and webhook signatures would cross the network in clear; put a TLS
    /// proxy in front and then set it). `serve` logs a warning at every start when it is used.
    public var allowPlainHTTP: Bool
    /// Per-app rate limits of the send API (``RateLimits``); nil: none.
    public var rateLimits: RateLimits?
    /// HTTPS for the API (``GatewayTLSSettings``); nil: plain HTTP, on loopback only unless ``allowPlainHTTP``.
    public var tls: GatewayTLSSettings?
    /// `host:port` where `serve` serves `/metrics` (plain HTTP, for Prometheus on a network only monitoring reaches),
    /// the API's listener then answering it `404`; nil: the API serves `/metrics` to anyone who can reach it.
    public var metricsListen: String?
    /// At a graceful stop, the seconds `/healthz` answers `503` (`stopping`) before the listener closes (0 to 300;
    /// default 0): give a load balancer the time to take the node out.
    public var drainSeconds: Double = 0
    /// At a graceful stop, the seconds requests in flight may take after the listener closed (0 to 600; default 20).
    public var requestGraceSeconds: Double = 20

    /// Creates a configuration.
    public init(
        listen: String = "127.0.0.1:8080", database: String, maxBodyBytes: Int = GatewayHTTPConfiguration.defaultMaxBodyBytes,
        logLevel: String = "info", overflow: Overflow? = nil, delivery: GatewayDeliverySettings = GatewayDeliverySettings(),
        allowPlainHTTP: Bool = false
    ) {
        self.allowPlainHTTP = allowPlainHTTP
        self.listen = listen
        self.database = database
        self.maxBodyBytes = maxBodyBytes
        self.logLevel = logLevel
        self.logFormat = "text"
        self.overflow = overflow
        self.delivery = delivery
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case listen, database, maxBodyBytes, logLevel, overflow, delivery, allowPlainHTTP, rateLimits, tls, metricsListen, logFormat
        case drainSeconds, requestGraceSeconds
    }

    /// The top level's keys (what ``ConfigurationKeyCheck`` accepts).
    static let knownKeys = CodingKeys.allCases.map(\.stringValue)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        listen = try container.decodeIfPresent(String.self, forKey: .listen) ?? "127.0.0.1:8080"
        database = try container.decode(String.self, forKey: .database)
        maxBodyBytes = try container.decodeIfPresent(Int.self, forKey: .maxBodyBytes)
            ?? GatewayHTTPConfiguration.defaultMaxBodyBytes
        logLevel = try container.decodeIfPresent(String.self, forKey: .logLevel) ?? "info"
        logFormat = try container.decodeIfPresent(String.self, forKey: .logFormat) ?? "text"
        overflow = try container.decodeIfPresent(Overflow.self, forKey: .overflow)
        delivery = try container.decodeIfPresent(GatewayDeliverySettings.self, forKey: .delivery)
            ?? GatewayDeliverySettings()
        allowPlainHTTP = try container.decodeIfPresent(Bool.self, forKey: .allowPlainHTTP) ?? false
        rateLimits = try container.decodeIfPresent(RateLimits.self, forKey: .rateLimits)
        tls = try container.decodeIfPresent(GatewayTLSSettings.self, forKey: .tls)
        metricsListen = try container.decodeIfPresent(String.self, forKey: .metricsListen)
        drainSeconds = try container.decodeIfPresent(Double.self, forKey: .drainSeconds) ?? 0
        requestGraceSeconds = try container.decodeIfPresent(Double.self, forKey: .requestGraceSeconds) ?? 20
    }

    /// A decoding error as the setting it is about and what it needs: `setting "delivery.leaseSeconds": …`.
    static func describe(_ error: DecodingError, root: JSONValue) -> String {
        func setting(_ path: [any CodingKey]) -> String {
            path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                .replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "setting \"\(setting(context.codingPath))\" must be \(Self.kind(type))"
        case .valueNotFound(let type, let context):
            return "setting \"\(setting(context.codingPath))\" must be \(Self.kind(type)), not null"
        case .keyNotFound(let key, let context):
            return "setting \"\(setting(context.codingPath + [key]))\" is required"
        case .dataCorrupted(let context):
            let name = setting(context.codingPath)
            if !name.isEmpty {
                return "setting \"\(name)\" has a value it cannot take (\(context.debugDescription))"
            }
            // Foundation reports a fraction where a whole number belongs without the setting's name: name the
            // settings that hold one.
            let fractions = Self.fractions(in: root, path: "")
            guard !fractions.isEmpty else { return "not a gateway configuration (\(context.debugDescription))" }
            return fractions.map { "setting \"\($0.0)\" is \($0.1)" }.joined(separator: ", ")
                + ": where a whole number belongs (sizes, counts, ports), give one"
        @unknown default:
            return "not a gateway configuration (\(error))"
        }
    }

    /// The settings whose value is a number with a fraction, with their values, in the file's order of keys.
    private static func fractions(in value: JSONValue, path: String) -> [(String, String)] {
        switch value {
        case .number(let number) where number.rounded() != number:
            return [(path, "\(number)")]
        case .object(let members):
            return members.flatMap { member in
                fractions(in: member.value, path: path.isEmpty ? member.key : path + "." + member.key)
            }
        case .array(let elements):
            return elements.indices.flatMap { fractions(in: elements[$0], path: path + "[\($0)]") }
        default:
            return []
        }
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type, is Int64.Type: "a whole number"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is String.Type: "a string"
        case is [Any].Type: "an array"
        default: "of type \(type)"
        }
    }

    /// Reads a configuration file, applies the environment's overrides and resolves relative paths against the
    /// file's directory.
    /// - Parameters:
    ///   - path: The file.
    ///   - environment: The process environment (overrides).
    /// - Throws: ``GatewayConfigurationError`` naming the file, the variable or the setting.
    public static func load(path: String, environment: [String: String]) throws -> GatewayConfiguration {
        let data: Data
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw GatewayConfigurationError("cannot read the configuration file \(path): it is a directory")
        }
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "not readable (check its permissions)" : "no such file"
            throw GatewayConfigurationError("cannot read the configuration file \(path): \(reason)")
        }
        // Strict JSON first: a setting given twice would otherwise take its last value without a word.
        let root: JSONValue
        do {
            root = try JSONParser.parse(Array(data), maxDepth: 32, errorCode: .invalidArgument)
        } catch let error as SealedPushError {
            throw GatewayConfigurationError("\(path) is not valid JSON: \(error.message) (each setting may appear once)")
        }
        // A misspelled key would otherwise leave its setting at the default without a word.
        try ConfigurationKeyCheck.check(root, file: path)
        var configuration: GatewayConfiguration
        do {
            configuration = try JSONDecoder().decode(GatewayConfiguration.self, from: data)
        } catch let error as DecodingError {
            throw GatewayConfigurationError("\(path): \(Self.describe(error, root: root))")
        } catch {
            throw GatewayConfigurationError(
                "\(path) is not a gateway configuration (JSON with at least \"database\"): \(error)")
        }
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let listen = value("SEALEDPUSH_GATEWAY_LISTEN") { configuration.listen = listen }
        if let listen = value("SEALEDPUSH_GATEWAY_METRICS_LISTEN") { configuration.metricsListen = listen }
        if let database = value("SEALEDPUSH_GATEWAY_DATABASE") { configuration.database = database }
        if let text = value("SEALEDPUSH_GATEWAY_MAX_BODY_BYTES") {
            guard let bytes = Int(text), bytes > 0 else {
                throw GatewayConfigurationError("SEALEDPUSH_GATEWAY_MAX_BODY_BYTES must be a positive integer")
            }
            configuration.maxBodyBytes = bytes
        }
        if let level = value("SEALEDPUSH_GATEWAY_LOG_LEVEL") { configuration.logLevel = level }
        if let format = value("SEALEDPUSH_GATEWAY_LOG_FORMAT") { configuration.logFormat = format }
        switch (value("SEALEDPUSH_GATEWAY_BLOB_DIR"), value("SEALEDPUSH_GATEWAY_BLOB_URL_PREFIX")) {
        case (let directory?, let prefix?):
            var overflow = configuration.overflow ?? Overflow(blobDirectory: directory, urlPrefix: prefix)
            overflow.blobDirectory = directory
            overflow.urlPrefix = prefix
            configuration.overflow = overflow
        case (nil, nil): break
        default:
            throw GatewayConfigurationError(
                "set both SEALEDPUSH_GATEWAY_BLOB_DIR and SEALEDPUSH_GATEWAY_BLOB_URL_PREFIX, or neither")
        }
        if let listen = value("SEALEDPUSH_GATEWAY_BLOB_LISTEN") {
            guard configuration.overflow != nil else {
                throw GatewayConfigurationError(
                    "SEALEDPUSH_GATEWAY_BLOB_LISTEN needs a blob store (overflow section or SEALEDPUSH_GATEWAY_BLOB_DIR)")
            }
            configuration.overflow?.listen = listen
        }
        switch (value("SEALEDPUSH_GATEWAY_TLS_CERTIFICATE"), value("SEALEDPUSH_GATEWAY_TLS_KEY")) {
        case (let certificate?, let key?): configuration.tls = GatewayTLSSettings(certificateFile: certificate, keyFile: key)
        case (nil, nil): break
        default:
            throw GatewayConfigurationError("set both SEALEDPUSH_GATEWAY_TLS_CERTIFICATE and SEALEDPUSH_GATEWAY_TLS_KEY, or neither")
        }
        try configuration.delivery.applyOverrides(value)
        let base = URL(fileURLWithPath: path).deletingLastPathComponent().path
        configuration.resolvePaths(against: base)
        try configuration.validate()
        return configuration
    }

    /// Makes relative SQLite and blob paths absolute against `base`.
    public mutating func resolvePaths(against base: String) {
        func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : base + "/" + path }
        if database.hasPrefix("sqlite:") { database = "sqlite:" + resolve(String(database.dropFirst(7))) }
        if let directory = overflow?.blobDirectory { overflow?.blobDirectory = resolve(directory) }
        tls?.resolvePaths(against: base)
        delivery.resolvePaths(against: base)
    }

    /// Checks the settings' forms.
    public func validate() throws {
        let (host, _) = try listenAddress()
        guard tls != nil || allowPlainHTTP || Self.isLoopback(host) else {
            throw GatewayConfigurationError(
                "listen \(listen) is not a loopback address and the API is plain HTTP: API keys would cross the network "
                    + "in clear. Give the gateway a certificate (\"tls\": {\"certificateFile\": …, \"keyFile\": …}), listen "
                    + "on 127.0.0.1 behind a TLS proxy, or set \"allowPlainHTTP\": true if a TLS proxy or a private "
                    + "network already protects it")
        }
        if let webhook = delivery.webhook, !allowPlainHTTP,  // with delivery off, receipts are forwarded there too
            !webhook.url.lowercased().hasPrefix("https://")
        {
            throw GatewayConfigurationError(
                "delivery.webhook.url must be https:// (events and their signatures would cross the network in clear), "
                    + "or set \"allowPlainHTTP\": true")
        }
        if let address = try metricsListenAddress(), address == (try listenAddress()), address.port != 0 {
            throw GatewayConfigurationError("metricsListen must differ from listen (\(listen)): it moves /metrics off the API")
        }
        guard maxBodyBytes > 0 else { throw GatewayConfigurationError("maxBodyBytes must be positive") }
        guard (0...300).contains(drainSeconds) else {
            throw GatewayConfigurationError("drainSeconds must be 0 to 300 (got \(drainSeconds))")
        }
        guard (0...600).contains(requestGraceSeconds) else {
            throw GatewayConfigurationError("requestGraceSeconds must be 0 to 600 (got \(requestGraceSeconds))")
        }
        try rateLimits?.validate()
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw GatewayConfigurationError(
                "logLevel must be trace, debug, info, notice, warning, error or critical")
        }
        guard ["text", "json"].contains(logFormat) else {
            throw GatewayConfigurationError("logFormat must be text or json (got \"\(logFormat)\")")
        }
        guard database.hasPrefix("sqlite:") || database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
        else {
            throw GatewayConfigurationError("database must be sqlite:PATH or postgres://user@host[:port]/database")
        }
        if let overflow {
            _ = try overflow.listenAddress()
            guard overflow.maxAgeSeconds > 0 else { throw GatewayConfigurationError("overflow.maxAgeSeconds must be positive") }
            guard overflow.fetchTimeoutSeconds.isFinite, (0.1...600).contains(overflow.fetchTimeoutSeconds) else {
                throw GatewayConfigurationError("overflow.fetchTimeoutSeconds must be 0.1...600")
            }
        }
        try delivery.validate()
    }

    /// The delivery service's configuration (the webhook secret read from its file), or nil when delivery is off.
    /// - Throws: ``GatewayConfigurationError`` naming the setting or the file.
    public func deliveryConfiguration() throws -> DeliveryConfiguration? {
        guard delivery.enabled else { return nil }
        return try delivery.deliveryConfiguration()
    }

    /// The webhook of a node that does not deliver (`delivery.enabled` false): receipts taken there are forwarded
    /// too. Nil when delivery is on (the delivery service runs the webhook) or no webhook is configured.
    /// - Throws: ``GatewayConfigurationError`` naming the setting or the file.
    public func receiptWebhookConfiguration() throws -> UnregisteredWebhookConfiguration? {
        guard !delivery.enabled else { return nil }
        return try delivery.webhookConfiguration()
    }

    /// Whether the plain-HTTP listener is exposed beyond loopback with ``allowPlainHTTP`` (`serve` warns then).
    public var plainHTTPBeyondLoopback: Bool {
        guard tls == nil, let host = try? listenAddress().host else { return false }
        return !Self.isLoopback(host)
    }

    /// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The listening host and port.
    public func listenAddress() throws -> (host: String, port: Int) {
        try Self.hostAndPort(listen, setting: "listen")
    }

    /// The metrics listener's host and port, or nil when the API serves `/metrics`.
    public func metricsListenAddress() throws -> (host: String, port: Int)? {
        guard let metricsListen else { return nil }
        return try Self.hostAndPort(metricsListen, setting: "metricsListen")
    }

    /// Parses `host:port` (an IPv6 host in brackets).
    static func hostAndPort(_ text: String, setting: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), colon > text.startIndex,
            let port = Int(text[text.index(after: colon)...])
        else { throw GatewayConfigurationError("\(setting) must be host:port, for example 127.0.0.1:8080 (got \"\(text)\")") }
        guard (0...65_535).contains(port) else {
            throw GatewayConfigurationError("\(setting): port \(port) is out of range (0-65535; 0 picks a free port)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    /// The HTTP server's settings.
    public func httpConfiguration() throws -> GatewayHTTPConfiguration {
        let (host, port) = try listenAddress()
        var configuration = GatewayHTTPConfiguration(
            host: host, port: port, maxBodyBytes: maxBodyBytes, rateLimits: rateLimits ?? RateLimits(),
            metricsOnAPI: metricsListen == nil)
        configuration.drain = .milliseconds(Int64((drainSeconds * 1000).rounded()))
        configuration.requestGrace = .milliseconds(Int64((requestGraceSeconds * 1000).rounded()))
        return configuration
    }

    /// The overflow sealer's settings, with its blob store opened.
    public func overflowConfiguration() throws -> OverflowConfiguration? {
        guard let overflow else { return nil }
        do {
            var fetch = AttachmentFetchPolicy()
            fetch.timeout = .milliseconds(Int64((overflow.fetchTimeoutSeconds * 1000).rounded()))
            fetch.allowHTTP = overflow.fetchAllowHTTP
            fetch.allowPrivateAddresses = overflow.fetchAllowPrivateAddresses
            fetch.allowedHosts = overflow.fetchAllowedHosts.map { Set($0.map { $0.lowercased() }) }
            return OverflowConfiguration(
                store: try FileSystemBlobStore(directory: overflow.blobDirectory), urlPrefix: overflow.urlPrefix,
                fetchPolicy: fetch)
        } catch let error as SealedPushError {
            throw GatewayConfigurationError("overflow.blobDirectory cannot be used: \(error.message)")
        }
    }

    /// Opens the configured database (not yet migrated).
    /// - Parameter logger: The database's logger.
    public func openStore(logger: Logger, creating: Bool = false) throws -> any GatewayStore {
        try Self.openStore(database, logger: logger, creating: creating)
    }

    /// Opens `sqlite:PATH` or a `postgres://` URL.
    ///
    /// Only `init` creates a SQLite database (`creating`): for everything else a path with no database is refused
    /// (``SQLiteGatewayStore/requireExistingDatabase(at:)``), so a mistyped path, or a database deleted or moved away,
    /// never becomes a new, empty gateway that looks healthy.
    /// - Throws: `GatewayStoreError` `database`, naming the path and `sealed-push-gateway init`, for a missing one.
    public static func openStore(_ database: String, logger: Logger, creating: Bool = false) throws -> any GatewayStore {
        if database.hasPrefix("sqlite:") {
            let path = String(database.dropFirst(7))
            if !creating { try SQLiteGatewayStore.requireExistingDatabase(at: path) }
            return try SQLiteGatewayStore(path: path)
        }
        return try PostgresGatewayStore(url: database, logger: logger)
    }

    /// The JSON text of this configuration (pretty, sorted keys).
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self)) + [0x0A]
    }
}
