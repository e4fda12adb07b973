import Foundation
import SealedPushCore
import SealedPushGateway

/// The contract's `Device`: what the gateway holds, the token shortened (tokens are not echoed whole).
struct DeviceModel: Encodable {
    var deviceId: String
    var environment: String
    var apnsToken: String
    var keyId: String
    var registeredAt: String
    var unregisteredAt: String?

    init(_ device: StoredDevice) {
        deviceId = device.deviceID
        environment = device.environment.rawValue
        apnsToken = String(device.apnsToken.prefix(8)) + "…"
        keyId = device.registration.keyId
        registeredAt = DeviceRegistration.formatDate(device.registeredAt)
        unregisteredAt = device.unregisteredAt.map(DeviceRegistration.formatDate)
    }
}

/// The contract's `SendAccepted`.
struct SendAcceptedModel: Encodable {
    var id: String
    var devices: Int
}

/// The contract's `NotificationStatus`; a claimed job is reported `queued`.
struct NotificationStatusModel: Encodable {
    struct Delivery: Encodable {
        var deviceId: String
        var state: String
        var apnsId: String?
        var reason: String?
        var attempts: Int
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
                updatedAt: DeviceRegistration.formatDate(delivery.updatedAt))
        }
    }
}

/// The contract's `Health`.
struct HealthModel: Encodable {
    var status: String
    var database: String
}
