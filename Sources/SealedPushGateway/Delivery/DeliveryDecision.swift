import Foundation
import SealedPushAPNs

/// How the result of one send ends (or postpones) its job.
///
/// - Delivered: `sent` with the `apns-id`.
/// - `Unregistered` (410), `BadDeviceToken`, `DeviceTokenNotForTopic`: `unregistered` with that reason; the store
///   marks the device (unless its token changed since the claim) and ends its other open jobs.
/// - Transient, once the client's own retries are spent — 429, 500, 503, 403 `ExpiredProviderToken`, a transport
///   failure, a timeout, a client shut down mid-send, an answer that could not be read, a provider token that could
///   not be signed: `retry` after the job-level backoff, or `failed` with the reason when the job has had
///   `jobRetry.maxAttempts` claims, or `expired` when the next attempt would come after the notification expires.
/// - Anything else APNs refused: `failed` with APNs's reason.
enum DeliveryDecision {
    /// The reasons that mean the token is gone.
    static let unregisteredReasons: Set<APNsReason> = [.unregistered, .badDeviceToken, .deviceTokenNotForTopic]

    /// Whether a failure may go away by itself.
    static func isTransient(_ failure: APNsFailure) -> Bool {
        if let status = failure.status {
            return [429, 500, 503].contains(status) || (status == 403 && failure.reason == .expiredProviderToken)
        }
        return [.transportFailure, .timeout, .clientShutdown, .badResponse, .providerTokenFailure].contains(
            failure.reason)
    }

    /// The outcome of a send report for a job.
    /// - Parameters:
    ///   - result: What the client reported.
    ///   - attempts: The job's claims so far, this one included.
    ///   - expiresAt: When the notification expires.
    ///   - policy: The job-level retry policy.
    ///   - now: The time.
    static func outcome(
        for result: APNsResult, attempts: Int, expiresAt: Date, policy: APNsRetryPolicy, now: Date
    ) -> JobOutcome {
        switch result {
        case .delivered(let apnsID):
            return .sent(apnsID: apnsID.uuidString.lowercased())
        case .failed(let failure):
            if unregisteredReasons.contains(failure.reason) { return .unregistered(reason: failure.reason.rawValue) }
            guard isTransient(failure) else { return .failed(reason: failure.reason.rawValue) }
            return retry(reason: failure.reason.rawValue, attempts: attempts, expiresAt: expiresAt, policy: policy, now: now)
        }
    }

    /// A transient failure: retry later, or give up when attempts are spent or the notification expires first.
    static func retry(reason: String, attempts: Int, expiresAt: Date, policy: APNsRetryPolicy, now: Date) -> JobOutcome {
        guard attempts < policy.maxAttempts else { return .failed(reason: reason) }
        let delay = policy.backoff(forRetry: max(1, attempts))
        let notBefore = now.addingTimeInterval(seconds(delay))
        guard notBefore < expiresAt else { return .expired }
        return .retry(reason: reason, notBefore: notBefore)
    }

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
