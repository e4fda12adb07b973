import Foundation
import SealedPushCore
import SealedPushGateway

/// The contract's `NotificationStatus`; a claimed job is reported `queued`.
struct NotificationStatusModel: Encodable {
    struct Delivery: Encodable {
        var deviceId: String
        var state: String
        var apnsId: String?
        var reason: String?
        var attempts: Int
        var lastTransientReason: String?
        var updatedAt: String
    }

    var id: String
    var createdAt: String
    var expiresAt: String
    var priority: Int
    var collapseId: String?
    var devices: [Delivery]

    init(_ status: NotificationStatus) {
        id = status.id.uuidString.lowercased()
        createdAt = DeviceRegistration.formatDate(status.createdAt)
        expiresAt = DeviceRegistration.formatDate(status.expiresAt)
        priority = status.priority
        collapseId = status.collapseID
        devices = status.deliveries.map { delivery in
            Delivery(
                deviceId: delivery.deviceID, state: delivery.state == .claimed ? "queued" : delivery.state.rawValue,
                apnsId: delivery.apnsID, reason: delivery.reason, attempts: delivery.attempts,
                lastTransientReason: delivery.lastTransientReason, updatedAt: DeviceRegistration.formatDate(delivery.updatedAt))
        }
    }
}
