import Foundation
import Logging
import SealedPushAPNs
import SealedPushCore

/// Delivery to iPhones: each job through its app's `APNsClient` for the token's environment
/// (``APNsClientRegistry``), with the job's fixed `apns-id` and collapse id so a resend is an exact copy.
struct APNsProvider: PushProvider {
    let platform = PushPlatform.apns
    let clients: APNsClientRegistry
    let logger: Logger

    /// APNs reasons that end the device.
    static let unregisteredReasons: Set<APNsReason> = [.unregistered, .badDeviceToken, .deviceTokenNotForTopic]

    func deliver(_ job: ClaimedJob, app: GatewayApp) async -> ProviderDelivery {
        guard job.address.platform == .apns, let environment = job.address.apnsEnvironment else {
            return ProviderDelivery(result: .failed(reason: "PlatformMismatch"), requests: 0)
        }
        let client: APNsClient
        do {
            client = try await clients.client(for: app, environment: environment)
        } catch {
            if Task.isCancelled { return ProviderDelivery(result: .abandoned, requests: 0) }
            logger.error(
                "no APNs client for the app", metadata: ["app": "\(job.appID)", "job": "\(job.id)", "error": "\(error)"])
            return ProviderDelivery(result: .transient(reason: "ProviderUnavailable"), requests: 0)
        }
        let token: DeviceToken
        do { token = try DeviceToken(hex: job.address.token) } catch {
            return ProviderDelivery(result: .unregistered(reason: APNsReason.badDeviceToken.rawValue, at: nil), requests: 0)
        }
        let notification = APNsNotification(
            deviceToken: token, topic: app.topic, payload: job.body.bytes,
            priority: job.priority == 10 ? .immediate : .powerConsiderate, expiration: job.expiresAt,
            collapseID: DeliveryIdentifiers.collapseID(notificationID: job.notificationID, collapseID: job.collapseID),
            apnsID: DeliveryIdentifiers.apnsID(notificationID: job.notificationID, deviceID: job.deviceID),
            // A control message sent as a background push (control-v1 §2.3) says so by its body's shape.
            pushType: APNsPayload.isBackground(job.body.bytes) ? .background : .alert)
        let report = await client.send(notification)
        let result: ProviderDelivery.Result
        switch report.result {
        case .delivered(let apnsID):
            result = .sent(providerID: apnsID.lowercasedString)
        case .failed(let failure):
            if Task.isCancelled, failure.reason == .clientShutdown {
                result = .abandoned
            } else if Self.unregisteredReasons.contains(failure.reason) {
                result = .unregistered(reason: failure.reason.rawValue, at: failure.timestamp)
            } else if DeliveryDecision.isTransient(failure) {
                result = .transient(reason: failure.reason.rawValue)
            } else {
                result = .failed(reason: failure.reason.rawValue)
            }
        }
        return ProviderDelivery(
            result: result, requests: report.attempts, transientReasons: report.transientFailures,
            possibleDuplicate: report.possibleDuplicate)
    }

    func shutdown() async { await clients.shutdown() }
}
