/// Per-app rate limits of the send API (`gateway.json`'s `rateLimits`): a token bucket for sends and one for the
/// devices they reach, with a default for every app and replacements for named apps.
///
/// ```json
/// "rateLimits": {
///   "sendsPerSecond": 50, "sendBurst": 100, "devicesPerSecond": 2000, "deviceBurst": 5000,
///   "apps": { "bulk-news": { "sendsPerSecond": 5, "sendBurst": 10 } }
/// }
/// ```
///
/// A missing member means no limit of that kind; a missing section, no limits at all. An app named under `apps`
/// gets exactly the limits given there (the defaults do not apply to it).
public struct RateLimits: Sendable, Hashable, Codable {
    /// One app's limits.
    public struct Limit: Sendable, Hashable, Codable {
        /// Sends accepted per second, sustained; nil: no send limit.
        public var sendsPerSecond: Double?
        /// Sends accepted at once after a quiet time (default: one second's worth, at least 1).
        public var sendBurst: Int?
        /// Devices reached per second, sustained (a send to a user with three devices counts 3); nil: no limit.
        public var devicesPerSecond: Double?
        /// Devices reached at once after a quiet time (default: one second's worth, at least 1). One send to more
        /// devices than this still goes through when the bucket is full; the next waits until the debt is paid.
        public var deviceBurst: Int?

        /// Receipts taken per second from one device key (`POST …/receipts`, which phones call without an API
        /// key); nil: ``defaultReceiptsPerSecondPerDevice`` (the receipt endpoint is always limited).
        public var receiptsPerSecondPerDevice: Double?
        /// Receipts taken at once from one device key after a quiet time; nil: ``defaultReceiptBurstPerDevice``.
        public var receiptBurstPerDevice: Int?

        /// Receipts that did not count (`422 receiptRefused`) taken per second from one client address, whatever key
        /// they name; nil: ``defaultRefusedReceiptsPerSecondPerClient``. Top level only (a client is not an app's).
        public var refusedReceiptsPerSecondPerClient: Double?
        /// Refused receipts taken at once from one client address; nil: ``defaultRefusedReceiptBurstPerClient``.
        public var refusedReceiptBurstPerClient: Int?

        /// Ten refused receipts per second per client address, sustained.
        public static let defaultRefusedReceiptsPerSecondPerClient = 10.0
        /// 100 refused receipts at once per client address.
        public static let defaultRefusedReceiptBurstPerClient = 100

        /// One receipt per second per device key, sustained.
        public static let defaultReceiptsPerSecondPerDevice = 1.0
        /// 30 receipts at once per device key (an app catching up on its queued receipts).
        public static let defaultReceiptBurstPerDevice = 30

        /// Creates limits.
        public init(
            sendsPerSecond: Double? = nil, sendBurst: Int? = nil, devicesPerSecond: Double? = nil, deviceBurst: Int? = nil,
            receiptsPerSecondPerDevice: Double? = nil, receiptBurstPerDevice: Int? = nil,
            refusedReceiptsPerSecondPerClient: Double? = nil, refusedReceiptBurstPerClient: Int? = nil
        ) {
            self.refusedReceiptsPerSecondPerClient = refusedReceiptsPerSecondPerClient
            self.refusedReceiptBurstPerClient = refusedReceiptBurstPerClient
            self.sendsPerSecond = sendsPerSecond
            self.sendBurst = sendBurst
            self.devicesPerSecond = devicesPerSecond
            self.deviceBurst = deviceBurst
            self.receiptsPerSecondPerDevice = receiptsPerSecondPerDevice
            self.receiptBurstPerDevice = receiptBurstPerDevice
        }

        static let knownKeys = [
            "sendsPerSecond", "sendBurst", "devicesPerSecond", "deviceBurst", "receiptsPerSecondPerDevice",
            "receiptBurstPerDevice", "refusedReceiptsPerSecondPerClient", "refusedReceiptBurstPerClient",
        ]

        func validate(_ path: String) throws {
            for (name, rate) in [
                ("sendsPerSecond", sendsPerSecond), ("devicesPerSecond", devicesPerSecond),
                ("receiptsPerSecondPerDevice", receiptsPerSecondPerDevice),
                ("refusedReceiptsPerSecondPerClient", refusedReceiptsPerSecondPerClient),
            ] {
                if let rate, !(rate.isFinite && rate > 0 && rate <= 1_000_000) {
                    throw GatewayConfigurationError("\(path).\(name) must be a number above 0 and at most 1000000 (got \(rate))")
                }
            }
            for (name, burst) in [
                ("sendBurst", sendBurst), ("deviceBurst", deviceBurst), ("receiptBurstPerDevice", receiptBurstPerDevice),
                ("refusedReceiptBurstPerClient", refusedReceiptBurstPerClient),
            ] {
                if let burst, !(1...1_000_000_000).contains(burst) {
                    throw GatewayConfigurationError("\(path).\(name) must be 1...1000000000 (got \(burst))")
                }
            }
            if sendBurst != nil, sendsPerSecond == nil {
                throw GatewayConfigurationError("\(path).sendBurst needs \(path).sendsPerSecond")
            }
            if deviceBurst != nil, devicesPerSecond == nil {
                throw GatewayConfigurationError("\(path).deviceBurst needs \(path).devicesPerSecond")
            }
        }
    }

    /// The limits of every app not named in ``apps``.
    public var defaults: Limit
    /// Limits of named apps, by app id (replacing ``defaults`` for them).
    public var apps: [String: Limit]

    /// Creates rate limits.
    public init(defaults: Limit = Limit(), apps: [String: Limit] = [:]) {
        self.defaults = defaults
        self.apps = apps
    }

    /// The limits of an app.
    public func limit(for appID: String) -> Limit { apps[appID] ?? defaults }

    private enum CodingKeys: String, CodingKey { case apps }

    static let knownKeys = Limit.knownKeys + ["apps"]

    public init(from decoder: any Decoder) throws {
        defaults = try Limit(from: decoder)
        apps = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent([String: Limit].self, forKey: .apps) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        try defaults.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !apps.isEmpty { try container.encode(apps, forKey: .apps) }
    }

    func validate() throws {
        try defaults.validate("rateLimits")
        for (appID, limit) in apps {
            try limit.validate("rateLimits.apps.\(appID)")
            if limit.refusedReceiptsPerSecondPerClient != nil || limit.refusedReceiptBurstPerClient != nil {
                throw GatewayConfigurationError(
                    "rateLimits.apps.\(appID): refusedReceiptsPerSecondPerClient and refusedReceiptBurstPerClient limit "
                        + "a client address whatever app it names; set them at the top level of rateLimits")
            }
        }
    }
}
