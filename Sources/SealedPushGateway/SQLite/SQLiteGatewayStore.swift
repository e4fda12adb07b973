import GRDB
import SealedPushCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The embedded ``GatewayStore``: one SQLite file in WAL mode (GRDB), the gateway's default.
///
/// Every write runs in a `BEGIN IMMEDIATE` transaction, so writers — this store's and any other process's on the
/// same file — are serialized by SQLite's write lock; a claim is therefore never handed to two workers. Waits for
/// the lock are bounded by `busyTimeout`. `synchronous = FULL`: a commit reported to the HTTP layer survives a
/// power loss, not only a crash. Claims and finishes — the delivery loop's two writes per job — commit with
/// `synchronous = NORMAL` instead (no fsync of their own: the next FULL commit, or SQLite's checkpoint, syncs them
/// with it): they survive `kill -9` like every write, and a power loss can undo the last of them, which only means a
/// job is sent again with the same bytes (a duplicate the device's duplicate rule absorbs), never a job lost. One
/// fsync per finished job was the delivery loop's ceiling.
public final class SQLiteGatewayStore: GatewayStore {
    private let pool: DatabasePool
    /// WAL pages after which a commit copies the WAL into the database file (`PRAGMA wal_autocheckpoint`).
    static let walAutoCheckpointPages = 8_000
    /// The database file.
    public let path: String
    /// Whether the last write went through (``writeProblem``).
    public let writeHealth = StoreWriteHealth()
    /// The file opened, watched for deletion or replacement.
    private let file: SQLiteFileIdentity

    /// Opens (creating if needed) the database at `path`. Call ``migrate()`` before use.
    ///
    /// Only `init` creates a gateway's database: other callers check ``requireExistingDatabase(at:)`` first.
    /// - Parameters:
    ///   - path: The database file; `-wal` and `-shm` files live beside it.
    ///   - busyTimeout: How long a write waits for another writer's lock before failing.
    /// - Throws: ``GatewayStoreError`` `database` when the file cannot be opened.
    public init(path: String, busyTimeout: Duration = .seconds(10)) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(Double(Millis.from(busyTimeout)) / 1000)
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // Statement journals (a savepoint, a statement that changes several rows inside a transaction) in memory,
            // not in a temporary file created, written and unlinked each time: ~190 times a second under one-device
            // load when each send of a group commit had a savepoint (7 % of that throughput).
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            // Copy the WAL back into the database file every 8,000 pages (32 MB) rather than SQLite's 1,000: a
            // checkpoint writes each page changed since the last one once, and under load the same few pages (the
            // tables' and indexes' newest leaves) change in every commit, so fewer checkpoints write far fewer
            // pages (`scripts/gateway-load.sh`, one binary alternated: 4,317 and 4,373 one-device sends a second
            // against 3,816 and 4,060). The WAL file keeps the largest size it reached (≈ 32 MB beside the database).
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.walAutoCheckpointPages)")
        }
        self.path = path
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw Self.wrap(error, "opening \(path)")
        }
        file = SQLiteFileIdentity(path: path)
    }

    /// Refuses a database path that names no file: a mistyped path, or a database deleted or moved away, would
    /// otherwise become a new, empty gateway that looks healthy (no apps, every API key refused).
    /// - Parameter path: The configured database file.
    /// - Throws: ``GatewayStoreError`` `database` naming the path and `sealed-push-gateway init`.
    public static func requireExistingDatabase(at path: String) throws {
        guard SQLiteFileIdentity.identity(of: path) == nil else { return }
        throw GatewayStoreError(
            .database, "no SQLite database at \(path); `sealed-push-gateway init` creates one")
    }

    /// Why this store cannot take writes now, if it cannot: the database file was deleted or replaced since it was
    /// opened (looked at at most once a second; writes are then refused), or the last write failed for want of the
    /// store (an SQLite result code such as `SQLITE_IOERR`, `SQLITE_READONLY` or `SQLITE_FULL`; that counts until a
    /// write succeeds again, or for ``StoreWriteHealth/failureWindow``). Costs no write.
    public var writeProblem: String? {
        if let problem = file.problem { return problem }
        return writeHealth.problem.map { "not writable: \($0)" }
    }

    // MARK: Schema and lifecycle

    /// The schema version ``migrate()`` brings a database to.
    public static var latestSchemaVersion: Int { SQLiteMigrations.all.last?.version ?? 0 }

    public func migrate() async throws -> Int {
        try await migrate(upTo: .max)
    }

    /// Applies the migrations the database lacks up to `version` (tests build older schemas with it).
    func migrate(upTo version: Int) async throws -> Int {
        let migrations = SQLiteMigrations.all.filter { $0.version <= version }
        return try await write("migrating") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS schema_version (
                        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)
                    """)
            let current = try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(version), 0) FROM schema_version") ?? 0
            let latest = SQLiteMigrations.all.last?.version ?? 0
            guard current <= latest else {
                throw GatewayStoreError(
                    .schemaTooNew, "the database is at schema version \(current); this gateway knows up to \(latest)")
            }
            var applied = 0
            for migration in migrations where migration.version > current {
                for statement in migration.statements { try db.execute(sql: statement) }
                try db.execute(
                    sql: "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                    arguments: [migration.version, migration.name, Millis.from(Date())])
                applied += 1
            }
            return applied
        }
    }

    public func schemaVersion() async throws -> Int {
        try await read("reading the schema version") { db in
            guard try db.tableExists("schema_version") else { return 0 }
            return try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(version), 0) FROM schema_version") ?? 0
        }
    }

    public func ping() async throws {
        _ = try await read("ping") { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    public func close() async throws {
        do { try pool.close() } catch { throw Self.wrap(error, "closing \(path)") }
    }

    /// Writes a consistent copy of the database to a new file while the gateway keeps running (SQLite's online
    /// backup, reading one snapshot: commits made meanwhile are not in the copy, and do not restart it).
    ///
    /// The copy is written beside `destination` under a temporary name (0600: it holds device tokens, API key
    /// digests and sealed bodies), checked with `PRAGMA integrity_check`, synced, then given its name — which must
    /// not exist yet (never replaced, never followed through a symlink). A copy that fails leaves no file. The copy
    /// runs on the calling thread (SQLite's backup steps are synchronous): an operator command's, not a server's.
    /// - Parameters:
    ///   - destination: The new file's path.
    ///   - pagesPerStep: The pages copied per step (4 MB with SQLite's 4 KiB pages by default).
    ///   - progress: Called after each step with the pages copied and the pages in all.
    /// - Returns: The pages copied and the page size.
    /// - Throws: ``GatewayStoreError`` `invalidArgument` when `destination` exists, `database` when SQLite fails.
    public func backup(
        to destination: String, pagesPerStep: Int = 1_024,
        progress: @escaping @Sendable (_ copied: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws -> (pages: Int, pageSize: Int) {
        guard !BackupFile.exists(destination) else {
            throw GatewayStoreError(.invalidArgument, "\(destination) exists: a backup is written to a new file only")
        }
        let url = URL(fileURLWithPath: destination)
        let temporary = url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".partial-\(UUID().uuidString)"
        // Created empty here, 0600 and exclusively (SQLite then writes into the empty file).
        try BackupFile.createEmpty(temporary)
        var named = false
        defer {
            BackupFile.remove(temporary)
            if !named { for suffix in ["-journal", "-wal", "-shm"] { BackupFile.remove(temporary + suffix) } }
        }
        do {
            let copy = try DatabaseQueue(path: temporary)
            try pool.backup(to: copy, pagesPerStep: CInt(clamping: max(1, pagesPerStep))) { step in
                progress(step.completedPageCount, step.totalPageCount)
            }
            let (pages, pageSize, integrity) = try await copy.writeWithoutTransaction { db in
                // The copy keeps the source's WAL mode; a single file is what an operator moves around.
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                return (
                    try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0,
                    try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0,
                    try String.fetchAll(db, sql: "PRAGMA integrity_check")
                )
            }
            try copy.close()
            guard integrity == ["ok"] else {
                throw GatewayStoreError(
                    .database, "the copy failed its integrity check: \(integrity.prefix(3).joined(separator: "; "))")
            }
            try BackupFile.sync(temporary)
            try BackupFile.name(temporary, as: destination)
            named = true
            return (pages, pageSize)
        } catch {
            throw Self.wrap(error, "backing up to \(destination)")
        }
    }

    /// Copies every committed page from the WAL into the database file (`PRAGMA wal_checkpoint(TRUNCATE)`).
    public func checkpoint() async throws {
        try await pool.writeWithoutTransaction { db in
            _ = try Row.fetchAll(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    // MARK: Apps and API keys

    public func putApp(_ app: GatewayApp, now: Date) async throws {
        try await write("storing app '\(app.id)'") { db in
            try db.execute(
                sql: """
                    INSERT INTO apps (id, topic, team_id, apns_key_id, apns_key_path, server_identity_path,
                                      previous_identity_paths, fcm_project_id, fcm_service_account_path,
                                      fcm_application_id, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET topic = excluded.topic, team_id = excluded.team_id,
                        apns_key_id = excluded.apns_key_id, apns_key_path = excluded.apns_key_path,
                        server_identity_path = excluded.server_identity_path,
                        previous_identity_paths = excluded.previous_identity_paths,
                        fcm_project_id = excluded.fcm_project_id,
                        fcm_service_account_path = excluded.fcm_service_account_path,
                        fcm_application_id = excluded.fcm_application_id, updated_at = excluded.updated_at
                    """,
                arguments: [
                    app.id, app.topic, app.teamID, app.apnsKeyID, app.apnsKeyPath, app.serverIdentityPath,
                    app.previousIdentityPathsColumn, app.fcm?.projectID, app.fcm?.serviceAccountPath, app.fcm?.applicationID,
                    Millis.from(now), Millis.from(now),
                ])
        }
    }

    public func app(id: String) async throws -> GatewayApp? {
        try await read("reading app '\(id)'") { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM apps WHERE id = ?"), arguments: [id]).map(Self.app)
        }
    }

    public func apps() async throws -> [GatewayApp] {
        try await read("reading apps") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM apps ORDER BY id").map(Self.app)
        }
    }

    public func removeApp(id: String) async throws -> AppRemoval? {
        try await write("removing app '\(id)'") { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [id]) ?? false else {
                return nil
            }
            func count(_ sql: String) throws -> Int { try Int.fetchOne(db, sql: sql, arguments: [id]) ?? 0 }
            let removal = AppRemoval(
                appID: id, devices: try count("SELECT COUNT(*) FROM devices WHERE app_id = ?"),
                apiKeys: try count("SELECT COUNT(*) FROM api_keys WHERE app_id = ?"),
                notifications: try count("SELECT COUNT(*) FROM notifications WHERE app_id = ?"),
                openJobs: try count("SELECT COUNT(*) FROM jobs WHERE app_id = ? AND state IN ('queued', 'claimed')"))
            try db.execute(sql: "DELETE FROM receipts WHERE app_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM apps WHERE id = ?", arguments: [id])  // the rest cascades
            return removal
        }
    }

    public func addAPIKey(_ key: StoredAPIKey) async throws {
        try await write("adding API key \(key.id)") { db in
            try Self.requireApp(key.appID, db)
            try db.execute(
                sql: "INSERT INTO api_keys (id, app_id, digest, label, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    key.id, key.appID, Data(key.digest), key.label, Millis.from(key.createdAt),
                    key.expiresAt.map(Millis.from),
                ])
        }
    }

    public func apiKey(id: String) async throws -> StoredAPIKey? {
        try await read("reading API key \(id)") { db in
            // Prepared once per connection (every request authenticates): compiling each time showed in the profile.
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM api_keys WHERE id = ?"), arguments: [id])
                .map(Self.apiKey)
        }
    }

    public func apiKeys(appID: String?) async throws -> [StoredAPIKey] {
        try await read("reading API keys") { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM api_keys WHERE ? IS NULL OR app_id = ? ORDER BY app_id, created_at, id",
                arguments: [appID, appID]
            ).map(Self.apiKey)
        }
    }

    public func touchAPIKey(id: String, at: Date) async throws {
        let millis = Millis.from(at)
        try await write("recording an API key's use", durable: false) { db in
            try db.execute(
                sql: "UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
                arguments: [millis, id, millis])
        }
    }

    private static func apiKey(_ row: Row) -> StoredAPIKey {
        let expiresAt: Int64? = row["expires_at"]
        let lastUsedAt: Int64? = row["last_used_at"]
        return StoredAPIKey(
            id: row["id"], appID: row["app_id"], digest: [UInt8](row["digest"] as Data), label: row["label"],
            createdAt: Millis.date(row["created_at"]), expiresAt: expiresAt.map(Millis.date),
            lastUsedAt: lastUsedAt.map(Millis.date))
    }

    public func removeAPIKey(id: String) async throws -> Bool {
        try await write("removing API key \(id)") { db in
            try db.execute(sql: "DELETE FROM api_keys WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    // MARK: Devices

    public func putDevice(
        appID: String, deviceID: String, address: PushAddress, registration: DeviceRegistration, userID: String?,
        now: Date
    ) async throws -> DevicePutResult {
        // Migration 15 lower-cased the key ids stored before; none in another case is written since.
        let registration = registration.lowercasingKeyID
        let device = StoredDevice(
            appID: appID, deviceID: deviceID, address: address, registration: registration.on(address),
            registeredAt: Millis.date(Millis.from(now)), userID: userID)
        let platform = address.platform.rawValue, token = address.token, environment = address.environmentColumn
        return try await write("storing device '\(deviceID)'") { db in
            try Self.requireApp(appID, db)
            let existed =
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM devices WHERE app_id = ? AND device_id = ?", arguments: [appID, deviceID])
                ?? false
            // One registered device per token in an app, platform and environment: the newest registration takes it.
            let losers = try String.fetchAll(
                db,
                sql: """
                    SELECT device_id FROM devices
                    WHERE app_id = ? AND platform = ? AND environment = ? AND push_token = ? AND device_id <> ?
                      AND unregistered_at IS NULL
                    """,
                arguments: [appID, platform, environment, token, deviceID])
            for loser in losers {
                try db.execute(
                    sql: "UPDATE devices SET unregistered_at = ? WHERE app_id = ? AND device_id = ?",
                    arguments: [Millis.from(now), appID, loser])
                try Self.endOpenJobs(
                    appID: appID, deviceID: loser, reason: DevicePutResult.tokenMovedReason, now: now, db)
            }
            try db.execute(
                sql: """
                    INSERT INTO devices (app_id, device_id, platform, push_token, environment, public_key, key_id,
                                         key_created_at, key_expires_at, registered_at, unregistered_at, user_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
                    ON CONFLICT (app_id, device_id) DO UPDATE SET platform = excluded.platform,
                        push_token = excluded.push_token,
                        environment = excluded.environment, public_key = excluded.public_key,
                        key_id = excluded.key_id, key_created_at = excluded.key_created_at,
                        key_expires_at = excluded.key_expires_at, registered_at = excluded.registered_at,
                        unregistered_at = NULL, user_id = excluded.user_id
                    """,
                arguments: [
                    appID, deviceID, platform, token, environment, registration.publicKey, registration.keyId,
                    Millis.from(registration.createdAt), registration.expiresAt.map(Millis.from),
                    Millis.from(now), userID,
                ])
            return DevicePutResult(created: !existed, device: device, tokenTakenFrom: losers.sorted())
        }
    }

    public func device(appID: String, deviceID: String) async throws -> StoredDevice? {
        try await read("reading device '\(deviceID)'") { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM devices WHERE app_id = ? AND device_id = ?", arguments: [appID, deviceID]
            ).map(Self.device)
        }
    }

    public func devices(appID: String, deviceIDs: [String]) async throws -> [StoredDevice] {
        guard !deviceIDs.isEmpty else { return [] }
        return try await read("reading devices") { db in
            let marks = Array(repeating: "?", count: deviceIDs.count).joined(separator: ", ")
            let sql = "SELECT * FROM devices WHERE app_id = ? AND device_id IN (\(marks)) ORDER BY device_id"
            // Sends to a few devices (the common case) reuse a prepared statement per length.
            let statement = deviceIDs.count <= 16 ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
            return try Row.fetchAll(statement, arguments: StatementArguments([appID] + deviceIDs)).map(Self.device)
        }
    }

    public func devices(appID: String, userIDs: [String]) async throws -> [StoredDevice] {
        guard !userIDs.isEmpty else { return [] }
        return try await read("reading users' devices") { db in
            var devices: [StoredDevice] = []
            for start in stride(from: 0, to: userIDs.count, by: 500) {
                let batch = Array(userIDs[start..<min(start + 500, userIDs.count)])
                let marks = Array(repeating: "?", count: batch.count).joined(separator: ", ")
                devices += try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM devices WHERE app_id = ? AND user_id IN (\(marks)) AND unregistered_at IS NULL
                        """,
                    arguments: StatementArguments([appID] + batch)
                ).map(Self.device)
            }
            return devices.sorted { $0.deviceID < $1.deviceID }
        }
    }

    public func removeDevice(appID: String, deviceID: String, now: Date) async throws -> Bool {
        try await write("removing device '\(deviceID)'") { db in
            try db.execute(
                sql: "DELETE FROM devices WHERE app_id = ? AND device_id = ?", arguments: [appID, deviceID])
            guard db.changesCount > 0 else { return false }
            try Self.endOpenJobs(appID: appID, deviceID: deviceID, reason: "DeviceRemoved", now: now, db)
            return true
        }
    }

    public func removeDevices(appID: String, userID: String, now: Date) async throws -> [String] {
        try await write("removing the devices of user '\(userID)'") { db in
            let ids = try String.fetchAll(
                db, sql: "SELECT device_id FROM devices WHERE app_id = ? AND user_id = ? ORDER BY device_id",
                arguments: [appID, userID])
            for id in ids {
                try db.execute(sql: "DELETE FROM devices WHERE app_id = ? AND device_id = ?", arguments: [appID, id])
                try Self.endOpenJobs(appID: appID, deviceID: id, reason: "DeviceRemoved", now: now, db)
            }
            return ids
        }
    }

    public func markDeviceUnregistered(appID: String, deviceID: String, reason: String, at: Date) async throws -> Bool {
        try await write("unregistering device '\(deviceID)'") { db in
            try db.execute(
                sql: """
                    UPDATE devices SET unregistered_at = COALESCE(unregistered_at, ?)
                    WHERE app_id = ? AND device_id = ?
                    """,
                arguments: [Millis.from(at), appID, deviceID])
            guard db.changesCount > 0 else { return false }
            try Self.endOpenJobs(appID: appID, deviceID: deviceID, reason: reason, now: at, db)
            return true
        }
    }

    // MARK: Notifications and the queue

    public func notificationID(appID: String, idempotencyKey: String) async throws -> UUID? {
        try await read("reading an idempotency key") { db in
            try String.fetchOne(
                db, sql: "SELECT id FROM notifications WHERE app_id = ? AND idempotency_key = ?",
                arguments: [appID, idempotencyKey]
            ).flatMap(UUID.init(uuidString:))
        }
    }

    public func idempotentRequest(appID: String, idempotencyKey: String) async throws -> (id: UUID, requestDigest: String?)? {
        try await read("reading an idempotency key") { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT id, request_digest FROM notifications WHERE app_id = ? AND idempotency_key = ?",
                    arguments: [appID, idempotencyKey]),
                let id = UUID(uuidString: row["id"])
            else { return nil }
            return (id, row["request_digest"])
        }
    }

    /// ``enqueueBatch(_:)`` of one: the same statements, the refusal thrown.
    public func enqueue(_ notification: NewNotification) async throws -> EnqueueResult {
        try await enqueueBatch([notification])[0].get()
    }

    public func enqueueBatch(_ notifications: [NewNotification]) async throws -> [Result<EnqueueResult, GatewayStoreError>] {
        guard !notifications.isEmpty else { return [] }
        // One durable transaction, one fsync, for every send that arrived while the previous batch was written. A
        // notification is refused before its first write (``check(_:_:)``), so a refusal leaves the others without a
        // savepoint each (a statement journal, and two more statements, per send); any other error fails the batch.
        return try await write("enqueueing \(notifications.count) notifications") { db in
            try notifications.map { notification in
                let checked: Enqueueing
                do {
                    try notification.validate()
                    checked = try Self.check(notification, db)
                } catch let error as GatewayStoreError where error.refusesOneNotification {
                    return .failure(error)
                }
                switch checked {
                case .replay(let earlier): return .success(earlier)
                case .insert(let addresses): return .success(try Self.insert(notification, addresses: addresses, db))
                }
            }
        }
    }

    /// What an enqueue does with a notification that passed ``check(_:_:)``.
    private enum Enqueueing {
        /// Its idempotency key was used: the earlier notification's answer.
        case replay(EnqueueResult)
        /// Insert it, with each job's device address (in its jobs' order; nil for a device marked unregistered).
        case insert(addresses: [PushAddress?])
    }

    /// ``enqueue(_:)``'s rules that read, before anything is written: a replay of an idempotency key, or every
    /// device registered, each job sealed to its device's registration, and the addresses a lease records.
    /// - Throws: ``GatewayStoreError`` `unknownDevice` or `deviceKeyChanged`; nothing else refuses a notification.
    private static func check(_ notification: NewNotification, _ db: Database) throws -> Enqueueing {
        if let key = notification.idempotencyKey,
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT n.id, n.request_digest, (SELECT COUNT(*) FROM jobs WHERE notification_id = n.id) AS jobs,
                               n.skipped_devices
                        FROM notifications n WHERE n.app_id = ? AND n.idempotency_key = ?
                        """),
                arguments: [notification.appID, key])
        {
            return .replay(
                EnqueueResult(
                    id: UUID(uuidString: row["id"])!, replayed: true, jobCount: row["jobs"],
                    requestDigest: row["request_digest"],
                    skippedDevices: SkippedDevice.devices(storedText: row["skipped_devices"])))
        }
        var addresses: [PushAddress?] = []  // by job; under a lease, recorded on the job as a claim records it
        for (index, job) in notification.jobs.enumerated() {
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT unregistered_at, platform, push_token, environment, key_id FROM devices
                            WHERE app_id = ? AND device_id = ?
                            """),
                    arguments: [notification.appID, job.deviceID])
            else {
                throw GatewayStoreError(
                    .unknownDevice, "device '\(job.deviceID)' is not registered in this app",
                    field: "devices[\(index)]")
            }
            if let keyID = job.keyID, (row[4] as String) != keyID || (row[1] as String) != job.body.platform.rawValue {
                throw GatewayStoreError.deviceKeyChanged(deviceID: job.deviceID, index: index)
            }
            // nil: the device is marked unregistered (its job starts `unregistered`, under a lease or not).
            addresses.append(
                (row[0] as Int64?) == nil ? PushAddress(token: row[2], platform: row[1], environment: row[3]) : nil)
        }
        return .insert(addresses: addresses)
    }

    /// A notification and its jobs that passed ``check(_:_:)``, within the same transaction.
    private static func insert(
        _ notification: NewNotification, addresses: [PushAddress?], _ db: Database
    ) throws -> EnqueueResult {
        let id = notification.id.lowercasedString
        let created = Millis.from(notification.createdAt)
        var arguments: StatementArguments = [
            id, notification.appID, notification.idempotencyKey, notification.priority,
            notification.collapseID, created, Millis.from(notification.expiresAt),
            notification.idempotencyKey == nil ? nil : notification.requestDigest,
        ]
        let skipped = SkippedDevice.storedText(notification.skippedDevices)
        if notification.kind.storedText != nil || skipped != nil {
            arguments += [notification.kind.storedText, skipped]
            try db.cachedStatement(
                sql: """
                    INSERT INTO notifications (id, app_id, idempotency_key, priority, collapse_id, created_at, expires_at,
                                               request_digest, kind, skipped_devices)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: arguments)
        } else {
            // Content to devices that could all be sealed to (nearly every send) leaves `kind` and `skipped_devices`
            // null, their default: the statement of before the columns.
            try db.cachedStatement(
                sql: """
                    INSERT INTO notifications (id, app_id, idempotency_key, priority, collapse_id, created_at, expires_at,
                                               request_digest)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: arguments)
        }
        var claimed: [ClaimedJob] = []
        for (index, job) in notification.jobs.enumerated() {
            let gone = addresses[index] == nil
            if let lease = notification.lease, let address = addresses[index] {
                // Claimed at once, as a claim of a queued job leaves it: the first attempt, the token recorded.
                try db.cachedStatement(
                    sql: """
                        INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before,
                                          lease_owner, lease_expires_at, attempts, push_token, updated_at)
                        VALUES (?, ?, ?, ?, 'claimed', ?, ?, ?, 1, ?, ?)
                        """
                ).execute(
                    arguments: [
                        id, notification.appID, job.deviceID, Data(job.body.bytes), created, lease.owner,
                        Millis.from(lease.expiresAt), address.token, created,
                    ])
                claimed.append(
                    ClaimedJob(
                        id: db.lastInsertedRowID, notificationID: notification.id, appID: notification.appID,
                        deviceID: job.deviceID, address: address, body: job.body, priority: notification.priority,
                        collapseID: notification.collapseID, expiresAt: notification.expiresAt,
                        acceptedAt: Millis.date(created), attempts: 1, leaseExpiresAt: lease.expiresAt))
            } else {
                // One prepared statement for every job (a fan-out to 1,000 devices parsed it 1,000 times).
                try db.cachedStatement(
                    sql: """
                        INSERT INTO jobs (notification_id, app_id, device_id, sealed_body, state, not_before,
                                          failure_reason, updated_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """
                ).execute(
                    arguments: [
                        id, notification.appID, job.deviceID, Data(job.body.bytes),
                        gone ? JobState.unregistered.rawValue : JobState.queued.rawValue, created,
                        gone ? "DeviceUnregistered" : nil, created,
                    ])
            }
            if let messageID = job.messageID, let keyID = job.keyID {
                try db.cachedStatement(
                    sql: "INSERT INTO job_messages (job_id, app_id, message_id, key_id) VALUES (?, ?, ?, ?)"
                ).execute(arguments: [db.lastInsertedRowID, notification.appID, messageID, keyID])
            }
        }
        return EnqueueResult(id: notification.id, replayed: false, jobCount: notification.jobs.count, claimed: claimed)
    }

    public func claim(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws -> [ClaimedJob] {
        guard limit > 0 else { return [] }
        let nowMillis = Millis.from(now)
        let leaseEnd = nowMillis + Millis.from(leaseDuration)
        return try await write("claiming jobs", durable: false) { db in
            // Walks that stop at `limit`, never a sort of the whole queue (which made every claim cost the queue's
            // depth: 20,000 queued jobs halved delivery, 60,000 quartered it): leases that ran out first (few: at
            // most the sends in flight), then each app's queued jobs in the order they fall due, along
            // `jobs_app_due`. Apps share a claim evenly (an app with fewer due jobs leaves its share to the others),
            // so one app's backlog — a bulk send to a million devices — never holds back another app's jobs. The
            // index keeps only open jobs (migration 13): each walk states that condition, or SQLite cannot read it.
            let select = """
                SELECT j.id, j.notification_id, j.app_id, j.device_id, d.platform, d.push_token, d.environment,
                       j.sealed_body, n.priority, n.collapse_id, n.expires_at, j.attempts, n.created_at
                FROM jobs j INDEXED BY jobs_app_due
                JOIN devices d ON d.app_id = j.app_id AND d.device_id = j.device_id
                JOIN notifications n ON n.id = j.notification_id
                """
            var rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                    \(select)
                    WHERE j.state = 'claimed' AND j.state IN ('queued', 'claimed') AND j.lease_expires_at <= ?
                      AND d.unregistered_at IS NULL AND n.expires_at > ?
                    ORDER BY j.lease_expires_at, j.id
                    LIMIT ?
                    """),
                arguments: [nowMillis, nowMillis, limit])
            if rows.count < limit {
                let queued = try db.cachedStatement(
                    sql: """
                        \(select)
                        WHERE j.state = 'queued' AND j.state IN ('queued', 'claimed') AND j.app_id = ?
                          AND j.not_before <= ? AND d.unregistered_at IS NULL
                          AND n.expires_at > ?
                        ORDER BY j.not_before, j.id
                        LIMIT ? OFFSET ?
                        """)
                var apps = try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM apps ORDER BY id"))
                if apps.count > 1 {  // no app always first
                    let first = Int(nowMillis % Int64(apps.count))
                    apps = Array(apps[first...] + apps[..<first])
                }
                var perApp = [[Row]](repeating: [], count: apps.count)
                var open = Array(apps.indices)
                var remaining = limit - rows.count
                while remaining > 0, !open.isEmpty {
                    let share = max(1, (remaining + open.count - 1) / open.count)
                    var more: [Int] = []
                    for index in open where remaining > 0 {
                        let wanted = min(share, remaining)
                        let got = try Row.fetchAll(
                            queued,
                            arguments: [apps[index], nowMillis, nowMillis, wanted, perApp[index].count])
                        perApp[index] += got
                        remaining -= got.count
                        if got.count == wanted { more.append(index) }
                    }
                    open = more
                }
                // Interleaved, so the sends start app by app.
                var position = 0
                while perApp.contains(where: { position < $0.count }) {
                    for each in perApp where position < each.count { rows.append(each[position]) }
                    position += 1
                }
            }
            var claimed: [ClaimedJob] = []
            // Columns by position, in the SELECT's order: a lookup by name lowercases and searches the names for
            // every column of every row (it showed in the delivery profile).
            for row in rows {
                let id: Int64 = row[0]
                let token: String = row[5]
                try db.cachedStatement(
                    sql: """
                        UPDATE jobs SET state = 'claimed', lease_owner = ?, lease_expires_at = ?,
                            attempts = attempts + 1, push_token = ?, updated_at = ?,
                            requests = requests + (CASE WHEN state = 'claimed' THEN 1 ELSE 0 END)
                        WHERE id = ?
                        """
                ).execute(arguments: [owner, leaseEnd, token, nowMillis, id])
                claimed.append(
                    ClaimedJob(
                        id: id, notificationID: UUID(uuidString: row[1])!, appID: row[2], deviceID: row[3],
                        address: PushAddress(token: token, platform: row[4], environment: row[6]),
                        body: SealedBody(storedBytes: [UInt8](row[7] as Data)), priority: row[8],
                        collapseID: row[9], expiresAt: Millis.date(row[10]), acceptedAt: Millis.date(row[12]),
                        attempts: (row[11] as Int) + 1, leaseExpiresAt: Millis.date(leaseEnd)))
            }
            return claimed
        }
    }

    public func finish(
        jobID: Int64, owner: String, outcome: JobOutcome, requests: Int, transientReason: String?, now: Date
    ) async throws -> Bool {
        let end = JobFinish(
            jobID: jobID, owner: owner, outcome: outcome, requests: requests, transientReason: transientReason, now: now)
        return try await write("finishing job \(jobID)", durable: false) { db in try Self.finish(end, db) }
    }

    /// Writes a batch of jobs' ends in one transaction (committed without an fsync of its own, like a single
    /// finish): all of them, or none when it fails.
    public func finish(_ batch: [JobFinish]) async throws -> [Bool] {
        guard !batch.isEmpty else { return [] }
        return try await write("finishing \(batch.count) jobs", durable: false) { db in
            try batch.map { try Self.finish($0, db) }
        }
    }

    /// One job's end, inside the caller's transaction.
    private static func finish(_ end: JobFinish, _ db: Database) throws -> Bool {
        let (jobID, owner, outcome, requests, transientReason, now) =
            (end.jobID, end.owner, end.outcome, end.requests, end.transientReason, end.now)
        let nowMillis = Millis.from(now)
        // Every statement also adds this claim's requests and keeps its last transient reason.
        let counts = "requests = requests + ?, transient_reason = COALESCE(?, transient_reason),"
        let requestCount = max(0, requests)
        let guardClause = "WHERE id = ? AND state = 'claimed' AND lease_owner = ?"
        do {
            switch outcome {
            case .sent(let apnsID):
                try db.cachedStatement(
                    sql: """
                        UPDATE jobs SET state = 'sent', apns_id = ?, failure_reason = NULL, lease_owner = NULL, \(counts)
                            lease_expires_at = NULL, updated_at = ? \(guardClause)
                        """).execute(
                    arguments: [apnsID, requestCount, transientReason, nowMillis, jobID, owner])
            case .failed(let reason):
                try db.cachedStatement(
                    sql: """
                        UPDATE jobs SET state = 'failed', failure_reason = ?, lease_owner = NULL, \(counts)
                            lease_expires_at = NULL, updated_at = ? \(guardClause)
                        """).execute(
                    arguments: [reason, requestCount, transientReason, nowMillis, jobID, owner])
            case .retry(let reason, let notBefore):
                try db.cachedStatement(
                    sql: """
                        UPDATE jobs SET state = 'queued', failure_reason = ?, not_before = ?, lease_owner = NULL, \(counts)
                            lease_expires_at = NULL, updated_at = ? \(guardClause)
                        """).execute(
                    arguments: [reason, Millis.from(notBefore), requestCount, transientReason, nowMillis, jobID, owner])
            case .expired:
                try db.cachedStatement(
                    sql: """
                        UPDATE jobs SET state = 'expired', lease_owner = NULL, lease_expires_at = NULL, \(counts)
                            updated_at = ? \(guardClause)
                        """).execute(
                    arguments: [requestCount, transientReason, nowMillis, jobID, owner])
            case .unregistered(let reason):
                try db.cachedStatement(
                    sql: """
                        UPDATE jobs SET state = 'unregistered', failure_reason = ?, lease_owner = NULL, \(counts)
                            lease_expires_at = NULL, updated_at = ? \(guardClause)
                        """).execute(
                    arguments: [reason, requestCount, transientReason, nowMillis, jobID, owner])
                guard db.changesCount > 0 else { return false }
                // The device is marked only if its token is still the one this job was sent to.
                let job = try Row.fetchOne(
                    db, sql: "SELECT app_id, device_id, push_token FROM jobs WHERE id = ?", arguments: [jobID])!
                try db.execute(
                    sql: """
                        UPDATE devices SET unregistered_at = COALESCE(unregistered_at, ?)
                        WHERE app_id = ? AND device_id = ? AND push_token = ?
                        """,
                    arguments: [nowMillis, job["app_id"], job["device_id"], job["push_token"]])
                if db.changesCount > 0 {
                    try Self.endOpenJobs(
                        appID: job["app_id"], deviceID: job["device_id"], reason: reason, now: now, db)
                    if let event = end.webhookEvent {
                        try Self.insertWebhookEvent(WebhookOutboxRow(event), now: nowMillis, db)
                    }
                }
                return true
            }
            return db.changesCount > 0
        }
    }

    public func expireOverdue(now: Date) async throws -> [PushPlatform: Int] {
        let nowMillis = Millis.from(now)
        return try await write("expiring jobs") { db in
            // Counted first, in the same write transaction: nothing changes between the two statements.
            var expired: [PushPlatform: Int] = [:]
            let counts = try Row.fetchAll(
                db,
                sql: """
                    SELECT d.platform AS platform, COUNT(*) AS count FROM jobs j
                    JOIN devices d ON d.app_id = j.app_id AND d.device_id = j.device_id
                    WHERE (j.state = 'queued' OR (j.state = 'claimed' AND j.lease_expires_at <= ?))
                      AND j.notification_id IN (SELECT id FROM notifications WHERE expires_at <= ?)
                    GROUP BY d.platform
                    """,
                arguments: [nowMillis, nowMillis])
            for row in counts {
                let name: String = row["platform"]
                guard let platform = PushPlatform(rawValue: name) else {
                    throw GatewayStoreError(.database, "a device's platform '\(name)' is neither apns nor fcm")
                }
                expired[platform] = row["count"]
            }
            try db.execute(
                sql: """
                    UPDATE jobs SET state = 'expired', lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
                    WHERE (state = 'queued' OR (state = 'claimed' AND lease_expires_at <= ?))
                      AND notification_id IN (SELECT id FROM notifications WHERE expires_at <= ?)
                    """,
                arguments: [nowMillis, nowMillis, nowMillis])
            return expired
        }
    }

    public func purgeExpired(before cutoff: Date, limit: Int) async throws -> Int {
        let cutoffMillis = Millis.from(cutoff)
        let limit = max(1, min(limit, 10_000))
        return try await write("purging expired notifications") { db in
            let ids = try String.fetchAll(
                db, sql: "SELECT id FROM notifications WHERE expires_at < ? ORDER BY expires_at LIMIT ?",
                arguments: [cutoffMillis, limit])
            for start in stride(from: 0, to: ids.count, by: 500) {
                let batch = Array(ids[start..<min(start + 500, ids.count)])
                let marks = Array(repeating: "?", count: batch.count).joined(separator: ",")
                try db.execute(
                    sql: "DELETE FROM jobs WHERE notification_id IN (\(marks))", arguments: StatementArguments(batch))
                try db.execute(
                    sql: "DELETE FROM notifications WHERE id IN (\(marks))", arguments: StatementArguments(batch))
            }
            try db.execute(
                sql: """
                    DELETE FROM receipts WHERE rowid IN (
                        SELECT rowid FROM receipts WHERE expires_at < ? ORDER BY expires_at LIMIT ?)
                    """,
                arguments: [cutoffMillis, limit])
            try db.execute(
                sql: """
                    DELETE FROM webhook_outbox WHERE id IN (
                        SELECT id FROM webhook_outbox WHERE given_up_at < ? ORDER BY given_up_at LIMIT ?)
                    """,
                arguments: [cutoffMillis, limit])
            return ids.count
        }
    }

    public func notificationStatus(appID: String, notificationID: UUID) async throws -> NotificationStatus? {
        let id = notificationID.lowercasedString
        return try await read("reading notification status") { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM notifications WHERE id = ? AND app_id = ?", arguments: [id, appID])
            else { return nil }
            let deliveries = try Row.fetchAll(
                db,
                sql: """
                    SELECT device_id, state, apns_id, failure_reason,
                           requests + (CASE WHEN state = 'claimed' THEN 1 ELSE 0 END) AS requests, transient_reason,
                           updated_at, receipt_outcome, receipt_reason, receipt_delivered, receipt_failed,
                           receipt_device_time, receipt_at, receipt_count
                    FROM jobs WHERE notification_id = ? ORDER BY device_id
                    """,
                arguments: [id]
            ).map { job in
                var receipt: JobReceipt?
                if let outcome: String = job["receipt_outcome"] {
                    receipt = JobReceipt(
                        outcome: outcome, reason: job["receipt_reason"], attachmentsDelivered: job["receipt_delivered"],
                        attachmentsFailed: job["receipt_failed"], deviceTime: Millis.date(job["receipt_device_time"]),
                        receivedAt: Millis.date(job["receipt_at"]), count: job["receipt_count"])
                }
                return NotificationStatus.Delivery(
                    deviceID: job["device_id"], state: JobState(rawValue: job["state"]) ?? .failed,
                    apnsID: job["apns_id"], reason: job["failure_reason"], attempts: job["requests"],
                    lastTransientReason: job["transient_reason"], updatedAt: Millis.date(job["updated_at"]),
                    receipt: receipt)
            }
            let withdrawnAt: Int64? = row["withdrawn_at"]
            return NotificationStatus(
                id: notificationID, appID: row["app_id"], priority: row["priority"], collapseID: row["collapse_id"],
                createdAt: Millis.date(row["created_at"]), expiresAt: Millis.date(row["expires_at"]),
                deliveries: deliveries, withdrawnAt: withdrawnAt.map(Millis.date),
                kind: NotificationKind(storedText: row["kind"]),
                skippedDevices: SkippedDevice.devices(storedText: row["skipped_devices"]))
        }
    }

    public func withdraw(appID: String, notificationID: UUID, now: Date) async throws -> Withdrawal? {
        let id = notificationID.lowercasedString
        let nowMillis = Millis.from(now)
        return try await write("withdrawing a notification") { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT collapse_id, expires_at, withdrawn_at FROM notifications WHERE id = ? AND app_id = ?",
                    arguments: [id, appID])
            else { return nil }
            let already = (row["withdrawn_at"] as Int64?) != nil
            if !already {
                try db.execute(
                    sql: "UPDATE notifications SET withdrawn_at = ? WHERE id = ?", arguments: [nowMillis, id])
            }
            try db.execute(
                sql: """
                    UPDATE jobs SET state = 'withdrawn',
                        failure_reason = CASE WHEN state = 'claimed' THEN ? ELSE ? END,
                        lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
                    WHERE notification_id = ? AND state IN ('queued', 'claimed')
                    """,
                arguments: [Withdrawal.reasonInFlight, Withdrawal.reasonQueued, nowMillis, id])
            let withdrawn = db.changesCount
            let reached = try String.fetchAll(
                db,
                sql: """
                    SELECT device_id FROM jobs
                    WHERE notification_id = ? AND (state = 'sent' OR (state = 'withdrawn' AND failure_reason = ?))
                    ORDER BY device_id
                    """,
                arguments: [id, Withdrawal.reasonInFlight])
            return Withdrawal(
                collapseID: row["collapse_id"], expiresAt: Millis.date(row["expires_at"]), withdrawnNow: withdrawn,
                reachedDevices: reached, alreadyWithdrawn: already)
        }
    }

    public func device(appID: String, keyID: String) async throws -> StoredDevice? {
        try await read("reading a device by key") { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM devices WHERE app_id = ? AND key_id = ? AND unregistered_at IS NULL LIMIT 1",
                arguments: [appID, keyID]
            ).map(Self.device)
        }
    }

    public func recordReceipt(_ receipt: ReceivedReceipt) async throws -> ReceiptRecording {
        try await recordReceipts([receipt])[0]
    }

    public func recordReceipts(_ receipts: [ReceivedReceipt]) async throws -> [ReceiptRecording] {
        guard !receipts.isEmpty else { return [] }
        // One transaction for the batch, without an fsync of its own, as claims and finishes (see the type's
        // documentation): a power loss can undo the last receipts recorded, which the status then lacks (the device
        // was answered 204 and will not resend); `kill -9` loses none. An fsync per receipt made each one cost
        // 0.85 ms of the gateway's CPU at full load.
        return try await write("recording \(receipts.count) receipts", durable: false) { db in
            let job = try db.cachedStatement(
                sql: """
                    SELECT j.id, j.notification_id, j.device_id, j.receipt_outcome, j.receipt_count
                    FROM job_messages m JOIN jobs j ON j.id = m.job_id
                    WHERE m.app_id = ? AND m.message_id = ? AND m.key_id = ?
                    """)
            let remember = try db.cachedStatement(
                sql: "INSERT INTO receipts (app_id, receipt_id, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
            let first = try db.cachedStatement(
                sql: """
                    UPDATE jobs SET receipt_outcome = ?, receipt_reason = ?, receipt_delivered = ?,
                        receipt_failed = ?, receipt_device_time = ?, receipt_at = ?, receipt_count = 1
                    WHERE id = ?
                    """)
            let later = try db.cachedStatement(sql: "UPDATE jobs SET receipt_count = receipt_count + 1 WHERE id = ?")
            return try receipts.map { receipt -> ReceiptRecording in
                guard
                    let row = try Row.fetchOne(
                        job, arguments: [receipt.appID, receipt.messageID, receipt.keyID])
                else { return .unknownMessage }
                guard (row[4] as Int) < ReceivedReceipt.maxPerJob else { return .limitReached }
                try remember.execute(
                    arguments: [receipt.appID, receipt.receiptID, Millis.from(receipt.receiptExpiresAt)])
                guard db.changesCount == 1 else { return .replayed }
                let isFirst = (row[3] as String?) == nil
                let jobID: Int64 = row[0]
                if isFirst {
                    try first.execute(
                        arguments: [
                            receipt.outcome, receipt.reason, receipt.attachmentsDelivered, receipt.attachmentsFailed,
                            Millis.from(receipt.deviceTime), Millis.from(receipt.receivedAt), jobID,
                        ])
                } else {
                    try later.execute(arguments: [jobID])
                }
                let notificationID = UUID(uuidString: row[1])!
                let deviceID: String = row[2]
                if isFirst, receipt.forwardsToWebhook {
                    try Self.insertWebhookEvent(
                        WebhookOutboxRow(receiptOf: jobID, appID: receipt.appID, deviceID: deviceID),
                        now: Millis.from(receipt.receivedAt), db)
                }
                return .recorded(notificationID: notificationID, deviceID: deviceID, first: isFirst)
            }
        }
    }

    public func queueDepth() async throws -> QueueDepth {
        try await read("reading the queue depth") { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT COALESCE(SUM(state = 'queued'), 0) AS queued, COALESCE(SUM(state = 'claimed'), 0) AS claimed
                    FROM jobs WHERE state IN ('queued', 'claimed')
                    """)!
            return QueueDepth(queued: row["queued"], claimed: row["claimed"])
        }
    }

    public func queueSummary() async throws -> QueueSummary {
        try await read("reading the queue by app") { db in
            // Both walk the open jobs only (`jobs_app_due` and `jobs_device` are partial indexes of them).
            let apps = try Row.fetchAll(
                db,
                sql: """
                    SELECT app_id, SUM(state = 'queued') AS queued, SUM(state = 'claimed') AS claimed,
                        MIN(CASE WHEN state = 'queued' THEN not_before END) AS oldest
                    FROM jobs WHERE state IN ('queued', 'claimed') GROUP BY app_id ORDER BY app_id
                    """
            ).map { row in
                QueueSummary.App(
                    appID: row["app_id"], queued: row["queued"], claimed: row["claimed"],
                    oldestQueuedDue: (row["oldest"] as Int64?).map(Millis.date))
            }
            var leases: [String: Int] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT lease_owner, COUNT(*) AS jobs FROM jobs
                    WHERE state = 'claimed' AND lease_owner IS NOT NULL GROUP BY lease_owner
                    """)
            {
                leases[row["lease_owner"]] = row["jobs"]
            }
            return QueueSummary(apps: apps, leases: leases)
        }
    }

    // MARK: Nodes

    public func node(id nodeID: String) async throws -> NodeInstance? {
        try await read("reading node '\(nodeID)'") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM nodes WHERE node_id = ?", arguments: [nodeID]).map(Self.node)
        }
    }

    public func nodes() async throws -> [NodeInstance] {
        try await read("reading the nodes") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM nodes ORDER BY node_id").map(Self.node)
        }
    }

    private static func node(_ row: Row) -> NodeInstance {
        NodeInstance(
            nodeID: row["node_id"], bootID: row["boot_id"], host: row["host"], machineBootID: row["machine_boot_id"],
            pid: row["pid"], processStart: row["process_start"], startedAt: Millis.date(row["started_at"]),
            heartbeatAt: Millis.date(row["heartbeat_at"]))
    }

    public func takeOverNode(_ instance: NodeInstance, replacing previousBootID: String?, now: Date) async throws -> Int? {
        let nowMillis = Millis.from(now)
        return try await write("taking over node '\(instance.nodeID)'") { db in
            if let previousBootID {
                try db.execute(
                    sql: """
                        UPDATE nodes SET boot_id = ?, host = ?, machine_boot_id = ?, pid = ?, process_start = ?,
                            started_at = ?, heartbeat_at = ?
                        WHERE node_id = ? AND boot_id = ?
                        """,
                    arguments: [
                        instance.bootID, instance.host, instance.machineBootID, instance.pid, instance.processStart,
                        Millis.from(instance.startedAt), nowMillis, instance.nodeID, previousBootID,
                    ])
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO nodes (node_id, boot_id, host, machine_boot_id, pid, process_start, started_at,
                                           heartbeat_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (node_id) DO NOTHING
                        """,
                    arguments: [
                        instance.nodeID, instance.bootID, instance.host, instance.machineBootID, instance.pid,
                        instance.processStart, Millis.from(instance.startedAt), nowMillis,
                    ])
            }
            guard db.changesCount > 0 else { return nil }
            try db.execute(
                sql: Self.takeBackLeasesSQL,
                arguments: [
                    nowMillis, instance.leaseOwner, instance.nodeID, instance.nodeID + "/", instance.nodeID + "/",
                ])
            let jobsTakenBack = db.changesCount
            try db.execute(
                sql: """
                    UPDATE webhook_outbox SET lease_owner = NULL, lease_expires_at = NULL
                    WHERE lease_owner <> ? AND (lease_owner = ? OR substr(lease_owner, 1, length(?)) = ?)
                    """,
                arguments: [instance.leaseOwner, instance.nodeID, instance.nodeID + "/", instance.nodeID + "/"])
            return jobsTakenBack
        }
    }

    public func heartbeat(_ instance: NodeInstance, now: Date) async throws -> Bool {
        try await write("heartbeat of node '\(instance.nodeID)'") { db in
            try db.execute(
                sql: "UPDATE nodes SET heartbeat_at = ? WHERE node_id = ? AND boot_id = ?",
                arguments: [Millis.from(now), instance.nodeID, instance.bootID])
            return db.changesCount > 0
        }
    }

    public func releaseNode(_ instance: NodeInstance) async throws {
        try await write("releasing node '\(instance.nodeID)'") { db in
            try db.execute(
                sql: "DELETE FROM nodes WHERE node_id = ? AND boot_id = ?", arguments: [instance.nodeID, instance.bootID])
        }
    }

    public func leasedJobs(nodeID: String) async throws -> [LeasedJob] {
        try await read("reading the leases of node '\(nodeID)'") { db in
            try Row.fetchAll(
                db, sql: Self.leasedJobsSQL, arguments: [nodeID, nodeID + "/", nodeID + "/"]
            ).map { row in
                LeasedJob(
                    id: row["id"], notificationID: UUID(uuidString: row["notification_id"])!, deviceID: row["device_id"],
                    owner: row["lease_owner"], leaseExpiresAt: Millis.date(row["lease_expires_at"]))
            }
        }
    }

    // MARK: Webhook outbox

    public func claimWebhookEvents(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws
        -> [StoredWebhookEvent]
    {
        guard limit > 0 else { return [] }
        let nowMillis = Millis.from(now)
        let types = ClaimedWebhookRow.knownEventTypes
        return try await write("claiming webhook events", durable: false) { db in
            let ids = try Int64.fetchAll(
                db,
                sql: """
                    SELECT id FROM webhook_outbox
                    WHERE (lease_owner IS NULL OR lease_expires_at <= ?) AND given_up_at IS NULL
                      AND event_type IN (\(types.map { _ in "?" }.joined(separator: ",")))
                    ORDER BY id LIMIT ?
                    """,
                arguments: StatementArguments([nowMillis] as [any DatabaseValueConvertible] + types + [limit]))
            guard !ids.isEmpty else { return [] }
            let marks = ids.map { _ in "?" }.joined(separator: ",")
            try db.execute(
                sql: "UPDATE webhook_outbox SET lease_owner = ?, lease_expires_at = ? WHERE id IN (\(marks))",
                arguments: StatementArguments([owner, nowMillis + Millis.from(leaseDuration)] as [any DatabaseValueConvertible] + ids))
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT o.*, j.notification_id, j.receipt_outcome, j.receipt_reason, j.receipt_delivered,
                           j.receipt_failed, j.receipt_device_time, j.receipt_at
                    FROM webhook_outbox o LEFT JOIN jobs j ON j.id = o.job_id
                    WHERE o.id IN (\(marks)) ORDER BY o.id
                    """,
                arguments: StatementArguments(ids))
            return rows.compactMap { row in
                ClaimedWebhookRow(
                    id: row["id"], deliveryID: row["delivery_id"], eventType: row["event_type"], appID: row["app_id"],
                    deviceID: row["device_id"], reason: row["reason"], occurredAt: row["occurred_at"],
                    attempts: row["attempts"], createdAt: row["created_at"], notificationID: row["notification_id"],
                    receiptOutcome: row["receipt_outcome"], receiptReason: row["receipt_reason"],
                    receiptDelivered: row["receipt_delivered"], receiptFailed: row["receipt_failed"],
                    receiptDeviceTime: row["receipt_device_time"], receiptAt: row["receipt_at"]
                ).event
            }
        }
    }

    public func renewWebhookEvents(owner: String, leaseDuration: Duration, now: Date) async throws -> Int {
        let leaseEnd = Millis.from(now) + Millis.from(leaseDuration)
        return try await write("renewing webhook events' leases", durable: false) { db in
            try db.execute(
                sql: "UPDATE webhook_outbox SET lease_expires_at = ? WHERE lease_owner = ?", arguments: [leaseEnd, owner])
            return db.changesCount
        }
    }

    public func recordWebhookAttempts(id: Int64, owner: String, attempts: Int) async throws -> Bool {
        try await write("recording webhook event \(id)'s attempts", durable: false) { db in
            try db.execute(
                sql: "UPDATE webhook_outbox SET attempts = ? WHERE id = ? AND lease_owner = ?",
                arguments: [attempts, id, owner])
            return db.changesCount > 0
        }
    }

    public func endWebhookEvent(id: Int64, owner: String) async throws -> Bool {
        try await write("ending webhook event \(id)", durable: false) { db in
            try db.execute(sql: "DELETE FROM webhook_outbox WHERE id = ? AND lease_owner = ?", arguments: [id, owner])
            return db.changesCount > 0
        }
    }

    public func webhookOutboxDepth() async throws -> WebhookOutboxDepth {
        try await read("counting the webhook outbox") { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) - COUNT(given_up_at) AS waiting, COUNT(given_up_at) AS given_up FROM webhook_outbox
                    """)
            return WebhookOutboxDepth(waiting: row?["waiting"] ?? 0, givenUp: row?["given_up"] ?? 0)
        }
    }

    public func giveUpWebhookEvent(id: Int64, owner: String, attempts: Int, failure: String, now: Date) async throws
        -> Bool
    {
        try await write("giving up webhook event \(id)") { db in
            try db.execute(
                sql: """
                    UPDATE webhook_outbox SET given_up_at = ?, failure = ?, attempts = ?, lease_owner = NULL,
                                              lease_expires_at = NULL
                    WHERE id = ? AND lease_owner = ?
                    """,
                arguments: [Millis.from(now), GivenUpWebhookEvent.kept(failure), attempts, id, owner])
            return db.changesCount > 0
        }
    }

    public func givenUpWebhookEvents(appID: String?, limit: Int) async throws -> [GivenUpWebhookEvent] {
        let limit = max(1, min(limit, 10_000))
        return try await read("listing given-up webhook events") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM webhook_outbox WHERE given_up_at IS NOT NULL AND (? IS NULL OR app_id = ?)
                    ORDER BY given_up_at, id LIMIT ?
                    """,
                arguments: [appID, appID, limit]
            ).map { row in
                GivenUpWebhookEvent(
                    id: row["id"], deliveryID: row["delivery_id"], eventType: row["event_type"], appID: row["app_id"],
                    deviceID: row["device_id"], attempts: row["attempts"], createdAt: Millis.date(row["created_at"]),
                    givenUpAt: Millis.date(row["given_up_at"]), failure: row["failure"] ?? "")
            }
        }
    }

    public func redeliverWebhookEvents(appID: String?, ids: [Int64]?) async throws -> Int {
        if let ids, ids.isEmpty { return 0 }
        return try await write("sending given-up webhook events again") { db in
            var sql = """
                UPDATE webhook_outbox SET given_up_at = NULL, failure = NULL, attempts = 0
                WHERE given_up_at IS NOT NULL AND (? IS NULL OR app_id = ?)
                """
            var arguments: [any DatabaseValueConvertible] = [appID, appID]
            if let ids {
                sql += " AND id IN (\(ids.map { _ in "?" }.joined(separator: ",")))"
                arguments += ids as [any DatabaseValueConvertible]
            }
            try db.execute(sql: sql, arguments: StatementArguments(arguments))
            return db.changesCount
        }
    }

    public func releaseWebhookEvent(id: Int64, owner: String, attempts: Int) async throws -> Bool {
        try await write("releasing webhook event \(id)") { db in
            try db.execute(
                sql: """
                    UPDATE webhook_outbox SET lease_owner = NULL, lease_expires_at = NULL, attempts = ?
                    WHERE id = ? AND lease_owner = ?
                    """,
                arguments: [attempts, id, owner])
            return db.changesCount > 0
        }
    }

    /// Writes a new outbox event, inside the caller's transaction.
    private static func insertWebhookEvent(_ row: WebhookOutboxRow, now: Int64, _ db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO webhook_outbox (delivery_id, event_type, app_id, device_id, reason, occurred_at, job_id,
                                            created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                row.deliveryID, row.eventType, row.appID, row.deviceID, row.reason, row.occurredAt, row.jobID, now,
            ])
    }

    // MARK: Helpers

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction (the single-writer lock, across processes too). `durable: false` commits it without an fsync of its own
    /// (`synchronous = NORMAL` for this transaction only): for writes whose loss at a power failure only repeats a
    /// send.
    private func write<T: Sendable>(
        _ what: String, durable: Bool = true, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        if let problem = file.problem {
            // The path no longer names the file open here: what is written now would be lost.
            writeHealth.recordFailure(problem)
            throw GatewayStoreError(
                .database,
                "SQLite refused \(what): \(path) is not the file this gateway opened any more (\(problem)); restore "
                    + "it and restart the gateway")
        }
        do {
            let result = try await pool.writeWithoutTransaction { db in
                if !durable { try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute() }
                defer { if !durable { try? db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute() } }
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
            writeHealth.recordSuccess()
            return result
        } catch {
            if let code = Self.unwritable(error) { writeHealth.recordFailure(code) }
            throw Self.wrap(error, what)
        }
    }

    /// The name of an SQLite result code that says the database cannot take writes (full disk, I/O error, read-only
    /// file, lock not obtained in time…); nil for any other failure (a constraint, a refusal of what was written).
    private static func unwritable(_ error: any Error) -> String? {
        guard let error = error as? DatabaseError else { return nil }
        let names: [Int32: String] = [
            3: "SQLITE_PERM", 5: "SQLITE_BUSY", 6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY",
            10: "SQLITE_IOERR", 11: "SQLITE_CORRUPT", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN", 26: "SQLITE_NOTADB",
        ]
        return names[error.resultCode.primaryResultCode.rawValue]
    }

    /// Runs `body` on a reader connection (internal for tests).
    func read<T: Sendable>(_ what: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T
    {
        do {
            return try await pool.read(body)
        } catch {
            throw Self.wrap(error, what)
        }
    }

    private static func wrap(_ error: any Error, _ what: String) -> any Error {
        if error is GatewayStoreError { return error }
        if let error = error as? DatabaseError {
            return GatewayStoreError(.database, "SQLite failed \(what): \(error.resultCode): \(error.message ?? "")")
        }
        return GatewayStoreError(.database, "SQLite failed \(what): \(type(of: error))")
    }

    private static func requireApp(_ appID: String, _ db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [appID]) ?? false else {
            throw GatewayStoreError(.unknownApp, "no app '\(appID)' in this gateway", field: "appId")
        }
    }

    private static func endOpenJobs(appID: String, deviceID: String, reason: String, now: Date, _ db: Database) throws {
        try db.execute(sql: endOpenJobsSQL, arguments: [reason, Millis.from(now), appID, deviceID])
    }

    /// Ends a device's open jobs (arguments: reason, now, app, device). Its `state IN ('queued', 'claimed')` is also
    /// the condition of the partial `jobs_device` index: SQLite reads a partial index only for a statement whose
    /// `WHERE` implies the index's.
    static let endOpenJobsSQL = """
        UPDATE jobs SET state = 'unregistered', failure_reason = ?, lease_owner = NULL,
            lease_expires_at = NULL, updated_at = ?
        WHERE app_id = ? AND device_id = ? AND state IN ('queued', 'claimed')
        """

    /// Puts back in the queue the jobs an earlier process of a node held (arguments: now, this process's lease
    /// owner, the node id, the node id and `/` twice). Like every walk of open jobs, it states the partial
    /// `jobs_app_due` index's condition (without it: a scan of every job kept).
    static let takeBackLeasesSQL = """
        UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = ?,
            requests = requests + 1
        WHERE state = 'claimed' AND state IN ('queued', 'claimed') AND lease_owner <> ?
          AND (lease_owner = ? OR substr(lease_owner, 1, length(?)) = ?)
        """

    /// A node's leased jobs (arguments: the node id, the node id and `/` twice), through `jobs_app_due` as
    /// ``takeBackLeasesSQL`` is.
    static let leasedJobsSQL = """
        SELECT id, notification_id, device_id, lease_owner, lease_expires_at FROM jobs
        WHERE state = 'claimed' AND state IN ('queued', 'claimed')
          AND (lease_owner = ? OR substr(lease_owner, 1, length(?)) = ?) ORDER BY id
        """

    private static func app(_ row: Row) -> GatewayApp {
        let projectID: String? = row["fcm_project_id"]
        let serviceAccountPath: String? = row["fcm_service_account_path"]
        let applicationID: String? = row["fcm_application_id"]
        var fcm: FCMAppCredentials?
        if let projectID, let serviceAccountPath, let applicationID {
            fcm = FCMAppCredentials(
                projectID: projectID, serviceAccountPath: serviceAccountPath, applicationID: applicationID)
        }
        return GatewayApp(
            id: row["id"], topic: row["topic"], teamID: row["team_id"], apnsKeyID: row["apns_key_id"],
            apnsKeyPath: row["apns_key_path"], serverIdentityPath: row["server_identity_path"],
            previousIdentityPaths: GatewayApp.previousIdentityPaths(column: row["previous_identity_paths"]), fcm: fcm)
    }

    private static func device(_ row: Row) -> StoredDevice {
        let keyExpiresAt: Int64? = row["key_expires_at"]
        let unregisteredAt: Int64? = row["unregistered_at"]
        let address = PushAddress(token: row["push_token"], platform: row["platform"], environment: row["environment"])
        return StoredDevice(
            appID: row["app_id"], deviceID: row["device_id"], address: address,
            registration: DeviceRegistration(
                publicKey: row["public_key"], keyId: row["key_id"], createdAt: Millis.date(row["key_created_at"]),
                expiresAt: keyExpiresAt.map(Millis.date)
            ).on(address),
            registeredAt: Millis.date(row["registered_at"]), unregisteredAt: unregisteredAt.map(Millis.date),
            userID: row["user_id"])
    }
}
