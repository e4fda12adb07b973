/// A failure the emulator can inject into a request instead of (or before) processing it normally.
public enum EmulatorFault: Sendable, Hashable, CustomStringConvertible {
    /// Answer with this status and `{"reason": reason}` (e.g. 429 `TooManyRequests`); nothing is recorded.
    case status(Int, reason: String)
    /// Close the TCP connection at once; every unanswered stream on it is dropped unrecorded.
    case connectionReset
    /// Send GOAWAY (JSON reason `Shutdown`) with the highest answered stream id as last-stream-id, drop every
    /// unanswered stream on the connection unrecorded, then close the connection.
    case goAway
    /// Wait this many milliseconds, then process the request normally.
    case slow(milliseconds: Int)
    /// Never answer (the stream stays open until the client gives up or the connection closes).
    case noResponse
    /// Stop reading the connection this request came on: it and everything after it on that connection go
    /// unanswered while the TCP connection stays open, as from a peer that vanished without closing it.
    case stallConnection

    /// 429 TooManyRequests.
    public static let tooManyRequests = EmulatorFault.status(429, reason: "TooManyRequests")
    /// 500 InternalServerError.
    public static let internalServerError = EmulatorFault.status(500, reason: "InternalServerError")
    /// 503 ServiceUnavailable.
    public static let serviceUnavailable = EmulatorFault.status(503, reason: "ServiceUnavailable")

    public var description: String {
        switch self {
        case .status(let status, let reason): return "\(status) \(reason)"
        case .connectionReset: return "connection reset"
        case .goAway: return "GOAWAY"
        case .slow(let milliseconds): return "slow \(milliseconds) ms"
        case .noResponse: return "no response"
        case .stallConnection: return "stalled connection"
        }
    }
}

/// Which requests get a fault: a script for the first requests (by arrival order across all connections,
/// 0-based; `nil` entries mean "no fault"), then independent random draws with the given probabilities from a
/// seeded generator (reproducible for a given arrival order).
public struct EmulatorFaultPlan: Sendable, Hashable {
    /// A fault and its probability per request.
    public struct Weighted: Sendable, Hashable {
        /// The fault.
        public var fault: EmulatorFault
        /// Its probability in [0, 1].
        public var probability: Double

        /// Creates a weighted fault.
        /// - Parameters:
        ///   - fault: The fault.
        ///   - probability: Its probability per request in [0, 1].
        public init(_ fault: EmulatorFault, probability: Double) {
            self.fault = fault
            self.probability = probability
        }
    }

    /// Faults for the first `script.count` requests.
    public var script: [EmulatorFault?]
    /// Random faults for the requests after the script. The probabilities must sum to at most 1.
    public var random: [Weighted]
    /// The seed of the random draws.
    public var seed: UInt64

    /// Creates a plan.
    /// - Parameters:
    ///   - script: Faults for the first requests (`nil` = none).
    ///   - random: Random faults after the script.
    ///   - seed: The generator's seed.
    public init(script: [EmulatorFault?] = [], random: [Weighted] = [], seed: UInt64 = 0x5EA1ED) {
        self.script = script
        self.random = random
        self.seed = seed
    }

    /// No faults.
    public static let none = EmulatorFaultPlan()

    /// The sum of the random probabilities.
    public var totalProbability: Double { random.reduce(0) { $0 + $1.probability } }
}
