/// What ``GatewayStore/putDevice(appID:deviceID:apnsToken:environment:registration:userID:now:)`` did.
///
/// An APNs token belongs to one registered device per app and environment: registering it under a device id
/// moves it there. The devices that held it are marked unregistered (a send to them queues nothing) and their open
/// jobs end `unregistered` with reason ``tokenMovedReason``; they are listed in ``tokenTakenFrom``.
public struct DevicePutResult: Sendable, Hashable {
    /// The reason the jobs of a device whose token another device registered end with.
    public static let tokenMovedReason = "TokenMovedToAnotherDevice"

    /// True when the device did not exist before (HTTP `201`), false when it was replaced (`200`).
    public var created: Bool
    /// The device as stored now.
    public var device: StoredDevice
    /// The devices that held this token (in this app and environment) until now, by id.
    public var tokenTakenFrom: [String]

    /// Creates a result.
    /// - Parameters:
    ///   - created: Whether the device is new.
    ///   - device: The device as stored.
    ///   - tokenTakenFrom: The devices the token was taken from.
    public init(created: Bool, device: StoredDevice, tokenTakenFrom: [String] = []) {
        self.created = created
        self.device = device
        self.tokenTakenFrom = tokenTakenFrom
    }
}
