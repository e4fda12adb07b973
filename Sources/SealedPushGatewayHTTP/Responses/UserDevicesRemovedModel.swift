/// The contract's `UserDevicesRemoved`: the devices a user's removal took away (the backend's own ids).
struct UserDevicesRemovedModel: Encodable {
    var userId: String
    var devicesRemoved: [String]
}
