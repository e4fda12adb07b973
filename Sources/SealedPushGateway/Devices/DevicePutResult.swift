/// What ``GatewayStore/putDevice(appID:deviceID:apnsToken:environment:registration:now:)`` did.
public struct DevicePutResult: Sendable, Hashable {
    /// True when the device did not exist before (HTTP `201`), false when it was replaced (`200`).
    public var created: Bool
    /// The device as stored now.
    public var device: StoredDevice

    /// Creates a result.
    /// - Parameters:
    ///   - created: Whether the device is new.
    ///   - device: The device as stored.
    public init(created: Bool, device: StoredDevice) {
        self.created = created
        self.device = device
    }
}
