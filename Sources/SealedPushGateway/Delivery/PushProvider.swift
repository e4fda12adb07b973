import Foundation
import SealedPushCore

/// A push platform the delivery service sends through: APNs and FCM today; another (Web Push, HMS) is one more
/// conforming type.
///
/// ``DeliveryService`` claims a job, reads its app, and hands the job to the provider of the job's platform
/// (``ClaimedJob/address``). The provider sends it — with its own bounded retries, within the per-send deadline the
/// lease covers — and says how it ended. Lease, job retry, expiry, webhook and metrics rules stay in the service, the
/// same for every platform.
public protocol PushProvider: Sendable {
    /// The platform this provider reaches.
    var platform: PushPlatform { get }

    /// Sends one claimed job of this provider's platform.
    /// - Parameters:
    ///   - job: The job (its body is in this platform's form; its address is this platform's).
    ///   - app: The job's app, with its credentials.
    /// - Returns: How the send ended.
    func deliver(_ job: ClaimedJob, app: GatewayApp) async -> ProviderDelivery

    /// Shuts the provider's connections down; sends still running end as abandoned.
    func shutdown() async
}

/// How one provider send ended, before the service's job rules apply.
public struct ProviderDelivery: Sendable, Hashable {
    /// How a send ended.
    public enum Result: Sendable, Hashable {
        /// Accepted; the provider's id for the message (APNs `apns-id`, FCM message name).
        case sent(providerID: String)
        /// The device's token is gone or not valid: the device gets no more sends.
        case unregistered(reason: String, at: Date?)
        /// A failure worth another claim later (rate limits, outages, connection loss, timeouts).
        case transient(reason: String)
        /// A failure another attempt will not fix.
        case failed(reason: String)
        /// Not sent because the service is stopping: the lease expires and the job is sent again, identically.
        case abandoned
    }

    /// How it ended.
    public var result: Result
    /// Requests made to the provider (its own retries included; 0 when refused before sending).
    public var requests: Int
    /// The reasons of the transient failures met along the way, in order (for metrics and the job's status).
    public var transientReasons: [String]
    /// Whether a request may have been delivered before an ambiguous failure (a resend may be a duplicate).
    public var possibleDuplicate: Bool

    /// Creates a result.
    /// - Parameters:
    ///   - result: How it ended.
    ///   - requests: Requests made.
    ///   - transientReasons: Transient failures met, in order.
    ///   - possibleDuplicate: Whether a resend may duplicate.
    public init(result: Result, requests: Int, transientReasons: [String] = [], possibleDuplicate: Bool = false) {
        self.result = result
        self.requests = requests
        self.transientReasons = transientReasons
        self.possibleDuplicate = possibleDuplicate
    }
}
