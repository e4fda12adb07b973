import Foundation
import Logging
import SealedPushCore
import SealedPushFCM

/// Delivery to Android devices: each job as an FCM HTTP v1 data-only message (`Specs/fcm-v1.md`) through its app's
/// `FCMClient` (``FCMClientRegistry``).
///
/// - The message carries the job's envelope text under `sp`, `android.priority` from the notification's priority
///   (10: `high`, 5: `normal`) and `android.ttl` counting down to the envelope's expiry. A resend carries the same
///   envelope bytes, which the device's duplicate rule shows at most once more.
/// - `android.collapse_key` only when the sender named a collapse id: FCM keeps at most four collapse keys per
///   device while it is offline, so a key per notification (APNs's default here) would drop messages.
/// - `UNREGISTERED`, `SENDER_ID_MISMATCH` and an invalid token end the device; 429, 500, 503, connection loss and
///   timeouts come back later; a configuration error (`THIRD_PARTY_AUTH_ERROR`, 401, a refused assertion) stops the
///   app's FCM sends in its client, is logged critical once per job, and puts the job back until it is fixed or the
///   job runs out of attempts.
struct FCMProvider: PushProvider {
    let platform = PushPlatform.fcm
    let clients: FCMClientRegistry
    let logger: Logger
    let now: @Sendable () -> Date

    func deliver(_ job: ClaimedJob, app: GatewayApp) async -> ProviderDelivery {
        let token = job.address.token
        guard job.address.platform == .fcm else {
            return ProviderDelivery(result: .failed(reason: "PlatformMismatch"), requests: 0)
        }
        let client: FCMClient
        do {
            client = try await clients.client(for: app)
        } catch {
            if Task.isCancelled { return ProviderDelivery(result: .abandoned, requests: 0) }
            logger.error(
                "no FCM client for the app", metadata: ["app": "\(job.appID)", "job": "\(job.id)", "error": "\(error)"])
            return ProviderDelivery(result: .transient(reason: "ProviderUnavailable"), requests: 0)
        }
        let nowSeconds = UInt64(max(0, now().timeIntervalSince1970.rounded(.down)))
        let expiresAt = UInt64(max(0, job.expiresAt.timeIntervalSince1970.rounded(.down)))
        // The API stores the notification's own id as its collapse id when the sender named none (the status shows
        // it). That id is a random UUID the gateway draws when it accepts the send, so a sender cannot have named it:
        // equal means "none named". (Naming an earlier notification's id, to replace it, differs and is kept.)
        let explicitCollapse = job.collapseID.flatMap { $0 == job.notificationID.lowercasedString ? nil : $0 }
        let message = FCMMessage(
            token: token, envelopeText: job.body.envelopeText,
            ttlSeconds: max(1, FCMMessage.ttl(expiresAt: expiresAt, now: nowSeconds)),
            priority: job.priority == 10 ? .high : .normal, collapseKey: explicitCollapse)
        let sent = await client.send(message)
        switch sent.outcome {
        case .success(let name):
            return ProviderDelivery(
                result: .sent(providerID: name), requests: sent.attempts,
                transientReasons: sent.transientFailures.map(\.name), possibleDuplicate: Self.ambiguous(sent))
        case .failure(let failure):
            let reason = failure.reason.name
            let result: ProviderDelivery.Result
            if Task.isCancelled, failure.reason == .connection || failure.reason == .timeout {
                result = .abandoned
            } else if failure.endsDevice {
                result = .unregistered(reason: reason, at: nil)
            } else if failure.isConfigurationError {
                logger.critical(
                    "FCM refused the app's credentials: its FCM sends are stopped until the configuration is fixed",
                    metadata: ["app": "\(job.appID)", "job": "\(job.id)", "failure": "\(failure)"])
                result = .transient(reason: reason)
            } else if failure.isRetryable {
                result = .transient(reason: reason)
            } else {
                result = .failed(reason: reason)
            }
            return ProviderDelivery(
                result: result, requests: sent.attempts, transientReasons: sent.transientFailures.map(\.name),
                possibleDuplicate: Self.ambiguous(sent))
        }
    }

    /// Whether an attempt failed without an answer (a lost connection, a timeout): FCM may have taken that message,
    /// so the one that followed may be a duplicate.
    static func ambiguous(_ sent: FCMSendResult) -> Bool {
        sent.transientFailures.contains { $0 == .connection || $0 == .timeout }
    }

    func shutdown() async { await clients.shutdown() }
}
