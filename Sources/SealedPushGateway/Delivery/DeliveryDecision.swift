import Foundation
import SealedPushAPNs

/// The job rules every platform shares: which APNs failures are transient (``APNsProvider``), and when a transient
/// failure, once the client's own retries are spent, puts the job back — `retry` after the job-level backoff, or
/// `failed` with the reason when the job has had `jobRetry.maxAttempts` claims, or `expired` when the next attempt
/// would come after the notification expires.
enum DeliveryDecision {
    /// Whether an APNs failure may go away by itself: 429, 500, 503, 403 `ExpiredProviderToken`, a transport
    /// failure, a timeout, a client shut down mid-send, an answer that could not be read, a provider token that
    /// could not be signed.
    static func isTransient(_ failure: APNsFailure) -> Bool {
        if let status = failure.status {
            return [429, 500, 503].contains(status) || (status == 403 && failure.reason == .expiredProviderToken)
        }
        return [.transportFailure, .timeout, .clientShutdown, .badResponse, .providerTokenFailure].contains(
            failure.reason)
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
