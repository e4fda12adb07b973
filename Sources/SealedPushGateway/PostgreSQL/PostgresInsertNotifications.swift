import Foundation
import PostgresNIO

/// The notifications of an enqueue (``PostgresGatewayStore/enqueueBatch(_:)``) in one insert over arrays, in
/// idempotency-key order (the same in every transaction, so two nodes' batches holding the same keys wait for each
/// other instead of deadlocking); a key already taken inserts nothing. `''` stands for none. Returns the ids
/// inserted. A named prepared statement (see ``PostgresEnqueueDevices``).
struct PostgresInsertNotifications: PostgresPreparedStatement {
    static let sql = """
        INSERT INTO notifications (id, app_id, idempotency_key, priority, collapse_id, created_at, expires_at,
                                   request_digest, kind, skipped_devices)
        SELECT n.id, n.app_id, NULLIF(n.idempotency_key, ''), n.priority, NULLIF(n.collapse_id, ''),
               n.created_at, n.expires_at, NULLIF(n.request_digest, ''), NULLIF(n.kind, ''),
               NULLIF(n.skipped_devices, '')
        FROM unnest($1::uuid[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::bigint[], $7::bigint[],
                    $8::text[], $9::text[], $10::text[])
            WITH ORDINALITY AS n(id, app_id, idempotency_key, priority, collapse_id, created_at, expires_at,
                                 request_digest, kind, skipped_devices, position)
        ORDER BY n.app_id, n.idempotency_key, n.position
        ON CONFLICT (app_id, idempotency_key) DO NOTHING
        RETURNING id
        """
    typealias Row = UUID

    var ids: [UUID] = []
    var appIDs: [String] = []
    var idempotencyKeys: [String] = []
    var priorities: [Int] = []
    var collapseIDs: [String] = []
    var createdAt: [Int64] = []
    var expiresAt: [Int64] = []
    var requestDigests: [String] = []
    var kinds: [String] = []
    /// ``SkippedDevice/storedText(_:)`` of each notification's devices left out (`''`: none).
    var skippedDevices: [String] = []

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(ids)
        bindings.append(appIDs)
        bindings.append(idempotencyKeys)
        bindings.append(priorities)
        bindings.append(collapseIDs)
        bindings.append(createdAt)
        bindings.append(expiresAt)
        bindings.append(requestDigests)
        bindings.append(kinds)
        bindings.append(skippedDevices)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> UUID {
        try row.decode(UUID.self)
    }
}
