import SealedPushCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A device of an app as the store holds it: where to send (token, environment) and what to seal to (the
/// registration that arrived last, `Specs/keyring-v1.md` §4).
public struct StoredDevice: Sendable, Hashable {
    /// The app the device belongs to.
    public var appID: String
    /// The backend's id for the device, unique within the app.
    public var deviceID: String
    /// The APNs device token (lowercase hex).
    public var apnsToken: String
    /// The token's APNs environment.
    public var environment: APNsEnvironment
    /// The current registration record: the one that arrived last.
    public var registration: DeviceRegistration
    /// When the gateway accepted ``registration`` (its own clock).
    public var registeredAt: Date
    /// When APNs reported the token unregistered (or the gateway marked it so); nil while sendable.
    public var unregisteredAt: Date?
    /// The backend's user the device belongs to, if it said (a send may name users instead of devices).
    public var userID: String?

    /// Creates a device record.
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
        self.appID = appID
        self.deviceID = deviceID
        self.apnsToken = apnsToken
        self.environment = environment
        self.registration = registration
        self.registeredAt = registeredAt
        self.unregisteredAt = unregisteredAt
        self.userID = userID
    }
}
