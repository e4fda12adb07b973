import PostgresNIO

/// The ends of jobs that finished together (``PostgresGatewayStore/finish(_:)``, every delivery's last write), in
/// one statement over arrays — a named prepared statement: each connection has PostgreSQL parse it once and, after
/// its first executions, run it on a generic plan (an index lookup of each id) instead of planning it on every batch,
/// which was half of its cost. Arrays of non-optional values: `''` stands for none, and a `notBefore` below 0 keeps
/// the job's. Returns the ids whose owner still held the job.
///
/// A job is found by its id and its lease owner only: the schema holds a lease on claimed jobs alone (migration 14),
/// so the owner's lease says the job is still claimed. With `state = 'claimed'` in the condition too, PostgreSQL could
/// plan the statement as a walk of every claimed entry of `jobs_app_due` (the live ones, and the dead ones each job
/// end leaves until vacuum) hashed against the ids, whenever its statistics said few jobs were claimed — 0.47 ms a
/// call instead of 0.14 in a load run whose statistics were stale — and kept that generic plan.
struct PostgresFinishJobs: PostgresPreparedStatement {
    static let sql = """
        UPDATE jobs SET state = v.state,
            apns_id = CASE WHEN v.state = 'sent' THEN v.apns_id ELSE jobs.apns_id END,
            failure_reason = CASE WHEN v.state = 'expired' THEN jobs.failure_reason ELSE NULLIF(v.reason, '') END,
            not_before = CASE WHEN v.not_before < 0 THEN jobs.not_before ELSE v.not_before END,
            requests = jobs.requests + v.requests,
            transient_reason = COALESCE(NULLIF(v.transient, ''), jobs.transient_reason),
            lease_owner = NULL, lease_expires_at = NULL, updated_at = v.now
        FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[],
                    $8::text[], $9::bigint[])
            AS v(id, owner, state, apns_id, reason, not_before, requests, transient, now)
        WHERE jobs.id = v.id AND jobs.lease_owner = v.owner
        RETURNING jobs.id
        """
    typealias Row = Int64

    var ids: [Int64] = []
    var owners: [String] = []
    var states: [String] = []
    var apnsIDs: [String] = []
    var reasons: [String] = []
    var notBefores: [Int64] = []
    var requests: [Int64] = []
    var transients: [String] = []
    var nows: [Int64] = []

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 9)
        bindings.append(ids)
        bindings.append(owners)
        bindings.append(states)
        bindings.append(apnsIDs)
        bindings.append(reasons)
        bindings.append(notBefores)
        bindings.append(requests)
        bindings.append(transients)
        bindings.append(nows)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int64 {
        try row.decode(Int64.self)
    }
}
