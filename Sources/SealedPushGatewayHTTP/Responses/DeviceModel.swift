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
    var userId: String?

    init(_ device: StoredDevice) {
        deviceId = device.deviceID
        environment = device.environment.rawValue
        apnsToken = String(device.apnsToken.prefix(8)) + "…"
        keyId = device.registration.keyId
        registeredAt = DeviceRegistration.formatDate(device.registeredAt)
        unregisteredAt = device.unregisteredAt.map(DeviceRegistration.formatDate)
        userId = device.userID
    }
}
