import Foundation
import SealedPushCore
import SealedPushGateway

/// The contract's `Device`: what the gateway holds, the token shortened (tokens are not echoed whole).
struct DeviceModel: Encodable {
    var deviceId: String
    var platform: String
    var environment: String?
    var apnsToken: String?
    var fcmToken: String?
    var keyId: String
    var registeredAt: String
    var unregisteredAt: String?
    var userId: String?

    init(_ device: StoredDevice) {
        deviceId = device.deviceID
        platform = device.address.platform.rawValue
        environment = device.environment?.rawValue
        let shortened = String(device.address.token.prefix(8)) + "…"
        switch device.address.platform {
        case .apns: apnsToken = shortened
        case .fcm: fcmToken = shortened
        }
        // Lower case, as the contract's pattern says: the store keeps key ids so (its migration lower-cased the
        // registrations stored before upper case was refused).
        keyId = device.registration.keyId
        registeredAt = DeviceRegistration.formatDate(device.registeredAt)
        unregisteredAt = device.unregisteredAt.map(DeviceRegistration.formatDate)
        userId = device.userID
    }
}
