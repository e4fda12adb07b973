import PostgresNIO

/// The first statement of an enqueue (``PostgresGatewayStore/enqueueBatch(_:)``): every named device of the batch
/// that is registered, whether it is marked unregistered, its address (recorded on jobs enqueued under a lease), and
/// the key id of its registration (what each job must have been sealed to).
/// A named prepared statement, as each of the enqueue's (see ``PostgresFinishJobs``): a send's statements were
/// planned on every execution, a third of the server's time per send.
///
/// Each named device is read by its primary key (the `LIMIT 1` keeps PostgreSQL from turning the lookups into a join
/// it may plan otherwise; the key makes it a no-op). Written as a join, the generic plan read the app's whole
/// `devices` table and hashed it whenever the table was small enough for a sequential scan to look cheaper than the
/// lookups — 1,000 devices, say: 0.1 ms of the server's time for every enqueue, as much as the send's own inserts.
struct PostgresEnqueueDevices: PostgresPreparedStatement {
    static let sql = """
        SELECT d.app_id, d.device_id, d.unregistered_at IS NOT NULL, d.platform, d.push_token, d.environment, d.key_id
        FROM (SELECT DISTINCT * FROM unnest($1::text[], $2::text[])) AS r(app_id, device_id)
        CROSS JOIN LATERAL (
            SELECT * FROM devices WHERE devices.app_id = r.app_id AND devices.device_id = r.device_id LIMIT 1) AS d
        """
    typealias Row = (
        appID: String, deviceID: String, unregistered: Bool, platform: String, token: String, environment: String,
        keyID: String
    )

    /// The app of each job.
    var appIDs: [String]
    /// The device of each job.
    var deviceIDs: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(appIDs)
        bindings.append(deviceIDs)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (appID, deviceID, unregistered, platform, token, environment, keyID) = try row.decode(
            (String, String, Bool, String, String, String, String).self)
        return (appID, deviceID, unregistered, platform, token, environment, keyID)
    }
}
