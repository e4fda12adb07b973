import Foundation
import NIOCore
import PostgresNIO

/// The jobs of an enqueue's new notifications and their message ids (``PostgresGatewayStore/enqueueBatch(_:)``) in
/// one statement over arrays, one element per job. A job with a lease owner goes in `claimed` as a claim of a
/// queued job leaves it (the first attempt, the token recorded); `''` and 0 stand for none. Returns the claimed
/// jobs' ids. A named prepared statement (see ``PostgresEnqueueDevices``).
struct PostgresInsertJobs: PostgresPreparedStatement {
    static let sql = """
        WITH inserted AS (
            INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before,
                              failure_reason, updated_at, lease_owner, lease_expires_at, attempts, push_token)
            SELECT job.notification_id, job.app_id, job.device_id, job.sealed_body, job.state, job.created,
                   NULLIF(job.reason, ''), job.created, NULLIF(job.owner, ''), NULLIF(job.lease_end, 0),
                   CASE WHEN job.owner = '' THEN 0 ELSE 1 END, NULLIF(job.token, '')
            FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::text[], $7::bigint[],
                        $8::text[], $9::bigint[], $10::text[])
                AS job(notification_id, app_id, device_id, sealed_body, state, reason, created, owner, lease_end,
                       token)
            RETURNING id, notification_id, device_id, state),
        messages AS (
            INSERT INTO job_messages (job_id, app_id, message_id, key_id)
            SELECT inserted.id, m.app_id, m.message_id, m.key_id
            FROM inserted
            JOIN unnest($1::uuid[], $2::text[], $3::text[], $11::text[], $12::text[])
                AS m(notification_id, app_id, device_id, message_id, key_id)
                ON m.notification_id = inserted.notification_id AND m.device_id = inserted.device_id
            WHERE m.message_id <> '' AND m.key_id <> '')
        SELECT id, notification_id, device_id FROM inserted WHERE state = 'claimed'
        """
    typealias Row = (id: Int64, notificationID: UUID, deviceID: String)

    var notificationIDs: [UUID] = []
    var appIDs: [String] = []
    var deviceIDs: [String] = []
    var bodies: [ByteBuffer] = []
    var states: [String] = []
    var reasons: [String] = []
    var createdAt: [Int64] = []
    var owners: [String] = []
    var leaseEnds: [Int64] = []
    var tokens: [String] = []
    var messageIDs: [String] = []
    var keyIDs: [String] = []

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 12)
        bindings.append(notificationIDs)
        bindings.append(appIDs)
        bindings.append(deviceIDs)
        bindings.append(bodies)
        bindings.append(states)
        bindings.append(reasons)
        bindings.append(createdAt)
        bindings.append(owners)
        bindings.append(leaseEnds)
        bindings.append(tokens)
        bindings.append(messageIDs)
        bindings.append(keyIDs)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (id, notificationID, deviceID) = try row.decode((Int64, UUID, String).self)
        return (id, notificationID, deviceID)
    }
}
