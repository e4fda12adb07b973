import Foundation
import GRDBSQLite
import SealedPushGateway

/// ``StoreBenchmark``'s floor: the store's enqueue and job-end statements (`SQLiteGatewayStore`, copied here), each
/// prepared once and run through SQLite's C API on the calling thread, in the same transactions with the same
/// settings. It reads each device's row as the store does, and checks nothing else.
final class StoreFloorWriter {
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw StoreBenchmarkError.sqlite("cannot open \(path)")
        }
        for pragma in [
            "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL", "PRAGMA temp_store = MEMORY",
            "PRAGMA wal_autocheckpoint = 8000", "PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 10000",
        ] {
            try exec(pragma)
        }
    }

    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
    }

    /// One group: the durable enqueue, then the job ends, as the gateway's two group commits write them.
    func write(_ batch: [NewNotification]) throws {
        var jobs: [Int64] = []
        try exec("BEGIN IMMEDIATE")
        for notification in batch {
            let job = notification.jobs[0]
            let id = notification.id.uuidString.lowercased()
            let created = Int64(notification.createdAt.timeIntervalSince1970 * 1000)
            let device = try statement(
                "SELECT unregistered_at, platform, push_token, environment, key_id FROM devices WHERE app_id = ? AND device_id = ?")
            bind(device, [notification.appID, job.deviceID])
            guard sqlite3_step(device) == SQLITE_ROW, let token = sqlite3_column_text(device, 2) else {
                throw StoreBenchmarkError.sqlite("no device \(job.deviceID)")
            }
            let pushToken = String(cString: token)
            sqlite3_reset(device)
            try run(
                statement(
                    """
                    INSERT INTO notifications (id, app_id, idempotency_key, priority, collapse_id, created_at, expires_at,
                                               request_digest) VALUES (?, ?, NULL, ?, NULL, ?, ?, NULL)
                    """),
                [id, notification.appID, Int64(notification.priority), created,
                 Int64(notification.expiresAt.timeIntervalSince1970 * 1000)])
            let insert = try statement(
                """
                INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before,
                                  lease_owner, lease_expires_at, attempts, push_token, updated_at)
                VALUES (?, ?, ?, ?, 'claimed', ?, ?, ?, 1, ?, ?)
                """)
            bind(insert, [id, notification.appID, job.deviceID, job.body.bytes, created, notification.lease!.owner,
                          Int64(notification.lease!.expiresAt.timeIntervalSince1970 * 1000), pushToken, created])
            try run(insert, [])
            let jobID = sqlite3_last_insert_rowid(db)
            jobs.append(jobID)
            try run(
                statement("INSERT INTO job_messages (job_id, app_id, message_id, key_id) VALUES (?, ?, ?, ?)"),
                [jobID, notification.appID, job.messageID!, job.keyID!])
        }
        try exec("COMMIT")
        try exec("PRAGMA synchronous = NORMAL")
        try exec("BEGIN IMMEDIATE")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for jobID in jobs {
            try run(
                statement(
                    """
                    UPDATE jobs SET state = 'sent', apns_id = ?, failure_reason = NULL, lease_owner = NULL,
                        requests = requests + ?, transient_reason = COALESCE(?, transient_reason),
                        lease_expires_at = NULL, updated_at = ? WHERE id = ? AND state = 'claimed' AND lease_owner = ?
                    """),
                ["apns-\(jobID)", Int64(1), nil, now, jobID, "bench-node"])
            guard sqlite3_changes(db) == 1 else { throw StoreBenchmarkError.lostJob }
        }
        try exec("COMMIT")
        try exec("PRAGMA synchronous = FULL")
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else { throw StoreBenchmarkError.sqlite(String(cString: sqlite3_errmsg(db))) }
        statements[sql] = statement
        return statement
    }

    private func bind(_ statement: OpaquePointer, _ values: [Any?]) {
        sqlite3_reset(statement)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case let text as String: sqlite3_bind_text(statement, index, text, -1, Self.transient)
            case let number as Int64: sqlite3_bind_int64(statement, index, number)
            case let bytes as [UInt8]:
                bytes.withUnsafeBytes { _ = sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), Self.transient) }
            default: sqlite3_bind_null(statement, index)
            }
        }
    }

    private func run(_ statement: OpaquePointer, _ values: [Any?]) throws {
        if !values.isEmpty { bind(statement, values) }
        guard sqlite3_step(statement) == SQLITE_DONE else {
            throw StoreBenchmarkError.sqlite(String(cString: sqlite3_errmsg(db)))
        }
        sqlite3_reset(statement)
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw StoreBenchmarkError.sqlite(String(cString: sqlite3_errmsg(db)))
        }
    }
}
