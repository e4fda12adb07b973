import SealedPushCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A device of an app as the store holds it: where to send (its platform and token) and what to seal to (the
/// registration that arrived last, `Specs/keyring-v1.md` §4).
public struct StoredDevice: Sendable, Hashable {
    /// The app the device belongs to.
    public var appID: String
    /// The backend's id for the device, unique within the app.
    public var deviceID: String
    /// The platform and token the device is reached by.
    public var address: PushAddress
    /// The current registration record: the one that arrived last.
    public var registration: DeviceRegistration
    /// When the gateway accepted ``registration`` (its own clock).
    public var registeredAt: Date
    /// When APNs reported the token unregistered (or the gateway marked it so); nil while sendable.
    public var unregisteredAt: Date?
    /// The backend's user the device belongs to, if it said (a send may name users instead of devices).
    public var userID: String?

    /// The APNs token (lowercase hex) of an APNs device; nil for FCM.
    public var apnsToken: String? { address.platform == .apns ? address.token : nil }
    /// The APNs environment of an APNs device; nil for FCM.
    public var environment: APNsEnvironment? { address.apnsEnvironment }

    /// Creates a device record.
    /// - Parameters:
    ///   - appID: The app.
    ///   - deviceID: The device id within the app.
    ///   - address: The platform and token.
    ///   - registration: The current registration.
    ///   - registeredAt: When the registration was accepted.
    ///   - unregisteredAt: When the device was marked unregistered, if it was.
    ///   - userID: The backend's user of the device, if any.
    public init(
        appID: String, deviceID: String, address: PushAddress, registration: DeviceRegistration, registeredAt: Date,
        unregisteredAt: Date? = nil, userID: String? = nil
    ) {
        self.appID = appID
        self.deviceID = deviceID
        self.address = address
        self.registration = registration
        self.registeredAt = registeredAt
        self.unregisteredAt = unregisteredAt
        self.userID = userID
    }

    /// Creates the record of an APNs device.
    /// - Parameters:
    ///   - appID: The app.
    ///   - deviceID: The device id within the app.
    ///   - apnsToken: The APNs token.
    ///   - environment: The token's environment.
    ///   - registration: The current registration.
    ///   - registeredAt: When the registration was accepted.
    ///   - unregisteredAt: When the device was marked unregistered, if it was.
    ///   - userID: The backend's user of the device, if any.
    public init(
        appID: String, deviceID: String, apnsToken: String, environment: APNsEnvironment,
        registration: DeviceRegistration, registeredAt: Date, unregisteredAt: Date? = nil, userID: String? = nil
    ) {
        self.init(
            appID: appID, deviceID: deviceID, address: .apns(token: apnsToken, environment: environment),
            registration: registration, registeredAt: registeredAt, unregisteredAt: unregisteredAt, userID: userID)
    }
}
