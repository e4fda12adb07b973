import PostgresNIO

/// One registered device of an app by device id (the read of a send to one device, the most frequent): a named
/// prepared statement, so each connection has PostgreSQL parse it once and, after its first executions, run it
/// on a generic plan instead of planning it on every send.
struct PostgresDeviceByID: PostgresPreparedStatement {
    static let sql = PostgresGatewayStore.deviceColumns + " WHERE app_id = $1 AND device_id = $2"
    typealias Row = StoredDevice

    /// The app.
    var appID: String
    /// The device id.
    var deviceID: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(appID)
        bindings.append(deviceID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> StoredDevice {
        try PostgresGatewayStore.device(row)
    }
}
