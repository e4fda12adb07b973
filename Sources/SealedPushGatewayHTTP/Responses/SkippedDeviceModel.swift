import SealedPushGateway

/// An entry of the contract's `skippedDevices` (`SendAccepted`, `NotificationStatus`): a device a send reached only
/// through its user and left out, because it cannot be sealed to.
struct SkippedDeviceModel: Encodable, Hashable {
    var deviceId: String
    /// The `Error` code a send naming the device directly gets (`invalidKey`, `fcmNotConfigured`).
    var code: String
    /// Why, for a person (names the device, never a key's material).
    var message: String

    /// The entry of a device a send left out.
    /// - Parameter device: The device, as the send recorded it.
    init(_ device: SkippedDevice) {
        deviceId = device.deviceID
        code = device.code
        message = device.message
    }

    /// The contract's list for `devices`: nil (the member left out) when the send left none out.
    /// - Parameter devices: The devices a send left out.
    /// - Returns: Their entries, in the send's order, or nil for none.
    static func list(_ devices: [SkippedDevice]) -> [SkippedDeviceModel]? {
        devices.isEmpty ? nil : devices.map(SkippedDeviceModel.init)
    }
}
