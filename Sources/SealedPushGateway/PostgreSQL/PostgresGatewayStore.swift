import Logging
import PostgresNIO
import SealedPushCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ``GatewayStore`` for several gateway nodes sharing one PostgreSQL database (postgres-nio's pooled client).
///
/// Claims use `SELECT … FOR UPDATE SKIP LOCKED`, so concurrent workers on any node never take the same job, and
/// a node that dies has its claims taken over once their leases expire. Migrations hold a transaction-scoped
/// advisory lock, so nodes starting together apply each migration once.
///
/// Every call has a deadline (``callDeadline``): while the server is down or unreachable the pool keeps
/// reconnecting in the background, and a call waiting for it (or stuck on a connection the server dropped) fails with
/// ``GatewayStoreError`` `database` at the deadline — or at once when its task is cancelled — instead of hanging.
public final class PostgresGatewayStore: GatewayStore {
    /// The default deadline of one store call: 10 s (the HTTP API's own deadline per store call).
    public static let defaultCallDeadline: Duration = .seconds(10)
    /// The deadline of ``migrate()``, which may rewrite large tables: 15 minutes, or ``callDeadline`` if longer.
    public static let migrationDeadline: Duration = .seconds(900)

    /// The most time one store call (a query or a transaction, waiting for a connection included) may take.
    public let callDeadline: Duration

    private let client: PostgresClient
    /// The server of a store made from a URL, for ``migrate()``'s first, direct connection (which names why it fails).
    private let server: PostgresServerCheck?
    private let runner: Task<Void, Never>
    private let logger: Logger
    private let statistics = PostgresStatistics()
    /// Whether the last write went through (``writeProblem``).
    public let writeHealth = StoreWriteHealth()

    /// Connects a pool to the database (connections open on first use). Call ``migrate()`` before use.
    /// - Parameters:
    ///   - configuration: postgres-nio's client configuration.
    ///   - callDeadline: The most time one store call may take (default ``defaultCallDeadline``).
    ///   - logger: Where postgres-nio logs; queries carry no content (bodies are sealed).
    public convenience init(
        configuration: PostgresClient.Configuration, callDeadline: Duration = PostgresGatewayStore.defaultCallDeadline,
        logger: Logger = Logger(label: "sealed-push.gateway.db")
    ) {
        self.init(configuration: configuration, callDeadline: callDeadline, logger: logger, server: nil)
    }

    private init(
        configuration: PostgresClient.Configuration, callDeadline: Duration, logger: Logger, server: PostgresServerCheck?
    ) {
        self.server = server
        var configuration = configuration
        // The store's statements are short and run thousands of times a second. PostgreSQL compiles a statement whose
        // estimated cost passes `jit_above_cost` with LLVM, every time it runs: the claim, whose cost estimate grows
        // with the queue (each row's device and notification check counts), took 300-550 ms of compiling for 1 ms of
        // work, and delivery fell to 267/s. JIT stays off for the store's sessions unless the caller sets it.
        if !configuration.options.additionalStartupParameters.contains(where: { $0.0 == "jit" }) {
            configuration.options.additionalStartupParameters.append(("jit", "off"))
        }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.callDeadline = callDeadline
        self.logger = logger
        self.runner = Task { await client.run() }
    }

    /// Connects to `postgres://user[:password]@host[:port]/database` (TLS off: for loopback and private
    /// networks; pass a configuration with TLS otherwise).
    /// - Parameters:
    ///   - url: The connection URL.
    ///   - callDeadline: The most time one store call may take (default ``defaultCallDeadline``).
    ///   - logger: Where postgres-nio logs.
    /// - Throws: ``GatewayStoreError`` `invalidArgument` when the URL is not of that form.
    public convenience init(
        url: String, callDeadline: Duration = PostgresGatewayStore.defaultCallDeadline,
        logger: Logger = Logger(label: "sealed-push.gateway.db")
    ) throws {
        guard let components = URLComponents(string: url),
            components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty
        else {
            throw GatewayStoreError(
                .invalidArgument, "a PostgreSQL URL must look like postgres://user[:password]@host[:port]/database",
                field: "database.url")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? nil : database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        // The pool arms an idle and a keep-alive timer each time a connection goes back idle, and cancels them at its
        // next lease; on this platform's runtime a cancelled sleep stays allocated until its deadline, so with the
        // defaults (60 s, 30 s) a busy node kept a minute of cancelled timers — RSS growing by about 5 MB per
        // 100,000 deliveries for the first minute and more (found with heaptrack). 10 s keeps that to a tenth of
        // a minute; an idle connection beyond the pool's minimum still closes, and idle ones are still checked.
        configuration.options.connectionIdleTimeout = .seconds(10)
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(10))
        let server = PostgresServerCheck(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? nil : database)
        self.init(configuration: configuration, callDeadline: callDeadline, logger: logger, server: server)
    }

    // MARK: Schema and lifecycle

    /// The schema version ``migrate()`` brings a database to.
    public static var latestSchemaVersion: Int { PostgresMigrations.all.last?.version ?? 0 }

    /// Connects once directly (a store made from a URL; otherwise pings through the pool), within ``callDeadline``.
    /// - Throws: ``GatewayStoreError`` `database` naming the server and the cause.
    public func checkConnection() async throws {
        guard let server else { return try await ping() }
        let logger = self.logger
        try await bounded("connecting to \(server.address)", deadline: callDeadline) { try await server.connect(logger: logger) }
    }

    /// Applies the migrations the database lacks. A store made from a URL first connects once directly, within
    /// ``callDeadline``, so a server that is down, unreachable or refuses the login fails here at once, naming the
    /// server and the cause, rather than after the migration's own deadline (the pool only logs connection failures
    /// while it retries).
    public func migrate() async throws -> Int {
        try await migrate(upTo: .max)
    }

    /// Applies the migrations the database lacks up to `version` (tests build older schemas with it).
    func migrate(upTo version: Int) async throws -> Int {
        if server != nil { try await checkConnection() }
        return try await transaction("migrating", deadline: max(callDeadline, Self.migrationDeadline)) { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresMigrations.lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS schema_version (
                    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)
                """, logger: logger)
            let current = try await Self.int(
                connection.query("SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_version", logger: logger))
            let latest = PostgresMigrations.all.last?.version ?? 0
            guard current <= latest else {
                throw GatewayStoreError(
                    .schemaTooNew, "the database is at schema version \(current); this gateway knows up to \(latest)")
            }
            var applied = 0
            for migration in PostgresMigrations.all where migration.version > current && migration.version <= version {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO schema_version (version, name, applied_at)
                    VALUES (\(migration.version), \(migration.name), \(Millis.from(Date())))
                    """, logger: logger)
                applied += 1
            }
            return applied
        }
    }

    public func schemaVersion() async throws -> Int {
        try await run("reading the schema version") { connection, logger in
            let exists = try await Self.int(
                connection.query(
                    "SELECT COUNT(*)::BIGINT FROM pg_tables WHERE tablename = 'schema_version' AND schemaname = current_schema()",
                    logger: logger))
            guard exists > 0 else { return 0 }
            return try await Self.int(
                connection.query("SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_version", logger: logger))
        }
    }

    /// Why this store cannot take writes now, if it cannot: the last write (a transaction, a claim, a job's end, a
    /// heartbeat…) failed for want of the server — a read-only transaction (`25006`: a standby, or
    /// `default_transaction_read_only`), insufficient resources (`53…`: disk full), operator intervention (`57…`),
    /// a system or internal error (`58…`, `XX…`), a connection error (`08…`, or the connection lost) — or had no answer
    /// within ``callDeadline`` (a commit waiting for a synchronous standby that is gone). Counts until a write
    /// succeeds again, or for ``StoreWriteHealth/failureWindow``. Costs no query.
    public var writeProblem: String? {
        writeHealth.problem.map { "not writable: \($0)" }
    }

    public func ping() async throws {
        _ = try await run("ping") { connection, logger in
            try await Self.int(connection.query("SELECT 1::BIGINT", logger: logger))
        }
    }

    /// How long ``close()`` waits for the connection pool to wind down.
    static let closeDeadline: Duration = .seconds(5)

    public func close() async throws {
        runner.cancel()
        // Bounded: after a busy run the pool's shutdown sometimes never ended (a stopped gateway stayed a process with
        // nothing left to do, seen twice in 200,000-delivery soaks). Past the deadline the connections are left to the
        // process's exit; nothing is lost (every write was committed or abandoned before).
        let runner = self.runner
        do {
            try await AbandonableCall<Void>.run(
                deadline: Self.closeDeadline,
                timeoutError: { GatewayStoreError(.database, "the PostgreSQL connection pool did not close in time") }
            ) { await runner.value }
        } catch {
            logger.warning("closing the PostgreSQL pool: gave up waiting", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Apps and API keys

    public func putApp(_ app: GatewayApp, now: Date) async throws {
        let now = Millis.from(now)
        try await run("storing app '\(app.id)'", writes: true) { connection, logger in
            _ = try await connection.query(
                """
                INSERT INTO apps (id, topic, team_id, apns_key_id, apns_key_path, server_identity_path,
                                  previous_identity_paths, fcm_project_id, fcm_service_account_path,
                                  fcm_application_id, created_at, updated_at)
                VALUES (\(app.id), \(app.topic), \(app.teamID), \(app.apnsKeyID), \(app.apnsKeyPath),
                        \(app.serverIdentityPath), \(app.previousIdentityPathsColumn), \(app.fcm?.projectID),
                        \(app.fcm?.serviceAccountPath), \(app.fcm?.applicationID), \(now), \(now))
                ON CONFLICT (id) DO UPDATE SET topic = excluded.topic, team_id = excluded.team_id,
                    apns_key_id = excluded.apns_key_id, apns_key_path = excluded.apns_key_path,
                    server_identity_path = excluded.server_identity_path,
                    previous_identity_paths = excluded.previous_identity_paths, fcm_project_id = excluded.fcm_project_id,
                    fcm_service_account_path = excluded.fcm_service_account_path,
                    fcm_application_id = excluded.fcm_application_id, updated_at = excluded.updated_at
                """, logger: logger)
        }
    }

    public func app(id: String) async throws -> GatewayApp? {
        try await run("reading app '\(id)'") { connection, logger in
            try await Self.apps(
                connection.query(
                    """
                    SELECT id, topic, team_id, apns_key_id, apns_key_path, server_identity_path,
                           previous_identity_paths, fcm_project_id, fcm_service_account_path, fcm_application_id
                    FROM apps WHERE id = \(id)
                    """, logger: logger)
            ).first
        }
    }

    public func apps() async throws -> [GatewayApp] {
        try await run("reading apps") { connection, logger in
            try await Self.apps(
                connection.query(
                    """
                    SELECT id, topic, team_id, apns_key_id, apns_key_path, server_identity_path,
                           previous_identity_paths, fcm_project_id, fcm_service_account_path, fcm_application_id
                    FROM apps ORDER BY id
                    """, logger: logger))
        }
    }

    public func removeApp(id: String) async throws -> AppRemoval? {
        try await transaction("removing app '\(id)'") { connection, logger in
            let rows = try await connection.query(
                """
                SELECT (SELECT COUNT(*) FROM devices WHERE app_id = \(id)),
                       (SELECT COUNT(*) FROM api_keys WHERE app_id = \(id)),
                       (SELECT COUNT(*) FROM notifications WHERE app_id = \(id)),
                       (SELECT COUNT(*) FROM jobs WHERE app_id = \(id) AND state IN ('queued', 'claimed'))
                FROM apps WHERE id = \(id) FOR UPDATE
                """, logger: logger)
            var removal: AppRemoval?
            for try await (devices, keys, notifications, open) in rows.decode((Int64, Int64, Int64, Int64).self) {
                removal = AppRemoval(
                    appID: id, devices: Int(devices), apiKeys: Int(keys), notifications: Int(notifications),
                    openJobs: Int(open))
            }
            guard let removal else { return nil }
            try await connection.query("DELETE FROM receipts WHERE app_id = \(id)", logger: logger)
            // Jobs and their message ids have no foreign keys (migration 11): they go first, explicitly.
            try await connection.query("DELETE FROM job_messages WHERE app_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM jobs WHERE app_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM apps WHERE id = \(id)", logger: logger)  // the rest cascades
            return removal
        }
    }

    public func addAPIKey(_ key: StoredAPIKey) async throws {
        try await transaction("adding API key \(key.id)") { connection, logger in
            try await Self.requireApp(key.appID, connection, logger)
            try await connection.query(
                """
                INSERT INTO api_keys (id, app_id, digest, label, created_at, expires_at)
                VALUES (\(key.id), \(key.appID), \(Data(key.digest)), \(key.label), \(Millis.from(key.createdAt)),
                        \(key.expiresAt.map(Millis.from)))
                """, logger: logger)
        }
    }

    public func apiKey(id: String) async throws -> StoredAPIKey? {
        try await run("reading API key \(id)") { connection, logger in
            try await Self.apiKeys(
                connection.query("\(unescaped: Self.apiKeyColumns) WHERE id = \(id)", logger: logger)
            ).first
        }
    }

    public func apiKeys(appID: String?) async throws -> [StoredAPIKey] {
        try await run("reading API keys") { connection, logger in
            try await Self.apiKeys(
                connection.query(
                    """
                    \(unescaped: Self.apiKeyColumns) WHERE \(appID)::text IS NULL OR app_id = \(appID)
                    ORDER BY app_id, created_at, id
                    """, logger: logger))
        }
    }

    public func touchAPIKey(id: String, at: Date) async throws {
        let millis = Millis.from(at)
        _ = try await run("recording an API key's use", writes: true) { connection, logger in
            try await connection.query(
                """
                UPDATE api_keys SET last_used_at = \(millis)
                WHERE id = \(id) AND (last_used_at IS NULL OR last_used_at < \(millis))
                """, logger: logger)
        }
    }

    private static let apiKeyColumns =
        "SELECT id, app_id, digest, label, created_at, expires_at, last_used_at FROM api_keys"

    private static func apiKeys(_ rows: PostgresRowSequence) async throws -> [StoredAPIKey] {
        var keys: [StoredAPIKey] = []
        for try await (id, appID, digest, label, createdAt, expiresAt, lastUsedAt) in rows.decode(
            (String, String, Data, String, Int64, Int64?, Int64?).self)
        {
            keys.append(
                StoredAPIKey(
                    id: id, appID: appID, digest: [UInt8](digest), label: label, createdAt: Millis.date(createdAt),
                    expiresAt: expiresAt.map(Millis.date), lastUsedAt: lastUsedAt.map(Millis.date)))
        }
        return keys
    }

    public func removeAPIKey(id: String) async throws -> Bool {
        try await run("removing API key \(id)", writes: true) { connection, logger in
            try await Self.count(connection.query("DELETE FROM api_keys WHERE id = \(id) RETURNING 1", logger: logger))
                > 0
        }
    }

    // MARK: Devices

    public func putDevice(
        appID: String, deviceID: String, address: PushAddress, registration: DeviceRegistration, userID: String?,
        now: Date
    ) async throws -> DevicePutResult {
        // Migration 16 lower-cased the key ids stored before; none in another case is written since.
        let registration = registration.lowercasingKeyID
        let nowMillis = Millis.from(now)
        let platform = address.platform.rawValue, token = address.token, environment = address.environmentColumn
        let keyCreated = Millis.from(registration.createdAt)
        let keyExpires = registration.expiresAt.map(Millis.from)
        let (created, losers) = try await transaction("storing device '\(deviceID)'") { connection, logger in
            try await Self.requireApp(appID, connection, logger)
            // One registered device per token in an app, platform and environment: the newest registration takes it.
            let taken = try await connection.query(
                """
                UPDATE devices SET unregistered_at = \(nowMillis)
                WHERE app_id = \(appID) AND platform = \(platform) AND environment = \(environment)
                  AND push_token = \(token)
                  AND device_id <> \(deviceID) AND unregistered_at IS NULL
                RETURNING device_id
                """, logger: logger)
            var losers: [String] = []
            for try await loser in taken.decode(String.self) { losers.append(loser) }
            for loser in losers {
                try await Self.endOpenJobs(
                    appID: appID, deviceID: loser, reason: DevicePutResult.tokenMovedReason, now: nowMillis, connection,
                    logger)
            }
            let rows = try await connection.query(
                """
                INSERT INTO devices (app_id, device_id, platform, push_token, environment, public_key, key_id,
                                     key_created_at, key_expires_at, registered_at, unregistered_at, user_id)
                VALUES (\(appID), \(deviceID), \(platform), \(token), \(environment), \(registration.publicKey),
                        \(registration.keyId), \(keyCreated), \(keyExpires), \(nowMillis), NULL, \(userID))
                ON CONFLICT (app_id, device_id) DO UPDATE SET platform = excluded.platform,
                    push_token = excluded.push_token,
                    environment = excluded.environment, public_key = excluded.public_key,
                    key_id = excluded.key_id, key_created_at = excluded.key_created_at,
                    key_expires_at = excluded.key_expires_at, registered_at = excluded.registered_at,
                    unregistered_at = NULL, user_id = excluded.user_id
                RETURNING (xmax::text = '0')
                """, logger: logger)
            for try await inserted in rows.decode(Bool.self) { return (inserted, losers.sorted()) }
            return (false, losers.sorted())
        }
        return DevicePutResult(
            created: created,
            device: StoredDevice(
                appID: appID, deviceID: deviceID, address: address, registration: registration.on(address),
                registeredAt: Millis.date(nowMillis), userID: userID),
            tokenTakenFrom: losers)
    }

    public func device(appID: String, deviceID: String) async throws -> StoredDevice? {
        try await run("reading device '\(deviceID)'") { connection, logger in
            var found: StoredDevice?
            for try await device in try await connection.execute(
                PostgresDeviceByID(appID: appID, deviceID: deviceID), logger: logger)
            {
                found = device  // the primary key: at most one; the stream is read to its end
            }
            return found
        }
    }

    public func devices(appID: String, deviceIDs: [String]) async throws -> [StoredDevice] {
        guard !deviceIDs.isEmpty else { return [] }
        if deviceIDs.count == 1 { return try await device(appID: appID, deviceID: deviceIDs[0]).map { [$0] } ?? [] }
        return try await run("reading devices") { connection, logger in
            try await Self.devices(
                connection.query(
                    """
                    \(unescaped: Self.deviceColumns) WHERE app_id = \(appID) AND device_id = ANY(\(deviceIDs))
                    ORDER BY device_id
                    """, logger: logger))
        }
    }

    public func devices(appID: String, userIDs: [String]) async throws -> [StoredDevice] {
        guard !userIDs.isEmpty else { return [] }
        return try await run("reading users' devices") { connection, logger in
            try await Self.devices(
                connection.query(
                    """
                    \(unescaped: Self.deviceColumns)
                    WHERE app_id = \(appID) AND user_id = ANY(\(userIDs)) AND unregistered_at IS NULL
                    ORDER BY device_id
                    """, logger: logger))
        }
    }

    public func removeDevice(appID: String, deviceID: String, now: Date) async throws -> Bool {
        try await transaction("removing device '\(deviceID)'") { connection, logger in
            let removed = try await Self.count(
                connection.query(
                    "DELETE FROM devices WHERE app_id = \(appID) AND device_id = \(deviceID) RETURNING 1",
                    logger: logger))
            guard removed > 0 else { return false }
            try await Self.endOpenJobs(
                appID: appID, deviceID: deviceID, reason: "DeviceRemoved", now: Millis.from(now), connection, logger)
            return true
        }
    }

    public func removeDevices(appID: String, userID: String, now: Date) async throws -> [String] {
        try await transaction("removing the devices of user '\(userID)'") { connection, logger in
            let rows = try await connection.query(
                "DELETE FROM devices WHERE app_id = \(appID) AND user_id = \(userID) RETURNING device_id",
                logger: logger)
            var ids: [String] = []
            for try await id in rows.decode(String.self) { ids.append(id) }
            for id in ids {
                try await Self.endOpenJobs(
                    appID: appID, deviceID: id, reason: "DeviceRemoved", now: Millis.from(now), connection, logger)
            }
            return ids.sorted()
        }
    }

    public func markDeviceUnregistered(appID: String, deviceID: String, reason: String, at: Date) async throws -> Bool {
        let at = Millis.from(at)
        return try await transaction("unregistering device '\(deviceID)'") { connection, logger in
            let marked = try await Self.count(
                connection.query(
                    """
                    UPDATE devices SET unregistered_at = COALESCE(unregistered_at, \(at))
                    WHERE app_id = \(appID) AND device_id = \(deviceID) RETURNING 1
                    """, logger: logger))
            guard marked > 0 else { return false }
            try await Self.endOpenJobs(appID: appID, deviceID: deviceID, reason: reason, now: at, connection, logger)
            return true
        }
    }

    // MARK: Notifications and the queue

    public func notificationID(appID: String, idempotencyKey: String) async throws -> UUID? {
        try await run("reading an idempotency key") { connection, logger in
            let rows = try await connection.query(
                "SELECT id FROM notifications WHERE app_id = \(appID) AND idempotency_key = \(idempotencyKey)",
                logger: logger)
            for try await id in rows.decode(UUID.self) { return id }
            return nil
        }
    }

    public func idempotentRequest(appID: String, idempotencyKey: String) async throws -> (id: UUID, requestDigest: String?)? {
        try await run("reading an idempotency key") { connection, logger in
            let rows = try await connection.query(
                """
                SELECT id, request_digest FROM notifications
                WHERE app_id = \(appID) AND idempotency_key = \(idempotencyKey)
                """, logger: logger)
            for try await (id, digest) in rows.decode((UUID, String?).self) { return (id, digest) }
            return nil
        }
    }

    /// ``enqueueBatch(_:)`` of one: the same statements, the refusal thrown.
    public func enqueue(_ notification: NewNotification) async throws -> EnqueueResult {
        try await enqueueBatch([notification])[0].get()
    }

    /// One transaction for the whole batch (the send endpoint's group commit), in a fixed number of statements
    /// whatever its size: the devices of every notification in one read, the notifications in one insert (a key
    /// already taken, by an earlier request or by an earlier notification of this batch, makes its notification a
    /// replay), their jobs and message ids in one more, the replays' rows in a last read. Each notification is
    /// answered as ``enqueue(_:)`` would answer it alone: a replay before an unknown device, and one refused
    /// (`unknownDevice`, `deviceKeyChanged`, `invalidArgument`) writes nothing and leaves the others.
    public func enqueueBatch(_ notifications: [NewNotification]) async throws -> [Result<EnqueueResult, GatewayStoreError>] {
        var results = [Result<EnqueueResult, GatewayStoreError>?](repeating: nil, count: notifications.count)
        var valid: [Int] = []
        for (index, notification) in notifications.enumerated() {
            do {
                try notification.validate()
                valid.append(index)
            } catch let error as GatewayStoreError {
                results[index] = .failure(error)
            }
        }
        if !valid.isEmpty {
            let batch = valid.map { notifications[$0] }
            let answers = try await transaction("enqueueing \(batch.count) notifications") { connection, logger in
                try await Self.insertBatch(batch, connection, logger)
            }
            for (index, answer) in zip(valid, answers) { results[index] = answer }
            let jobs = answers.reduce(0) { sum, answer in
                guard case .success(let result) = answer, !result.replayed else { return sum }
                return sum + result.jobCount
            }
            if jobs > 0, statistics.added(jobs) { analyzeInBackground() }
        }
        return results.map { $0! }
    }

    /// ``enqueueBatch(_:)``'s statements, in the caller's transaction, for notifications that passed `validate()`.
    private static func insertBatch(
        _ batch: [NewNotification], _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [Result<EnqueueResult, GatewayStoreError>] {
        struct DeviceKey: Hashable {
            var appID: String
            var deviceID: String
        }
        // 1. Every device of the batch: known, and unregistered or not. (Each statement of the enqueue is a named
        //    prepared one, planned once per connection.)
        // Each registered device: whether it is marked unregistered, and its address (recorded on jobs enqueued
        // under a lease, as a claim does).
        var known: [DeviceKey: (unregistered: Bool, address: PushAddress, keyID: String)] = [:]
        let devices = PostgresEnqueueDevices(
            appIDs: batch.flatMap { notification in notification.jobs.map { _ in notification.appID } },
            deviceIDs: batch.flatMap { $0.jobs.map(\.deviceID) })
        for try await device in try await connection.execute(devices, logger: logger) {
            let key = DeviceKey(appID: device.appID, deviceID: device.deviceID)
            known[key] = (
                device.unregistered,
                PushAddress(token: device.token, platform: device.platform, environment: device.environment),
                device.keyID
            )
        }
        // What refuses each notification, if anything: its first device that is not registered, else its first job
        // sealed to a registration its device no longer has.
        let refused: [GatewayStoreError?] = batch.map { notification in
            let registered = notification.jobs.map { known[DeviceKey(appID: notification.appID, deviceID: $0.deviceID)] }
            if let index = registered.firstIndex(where: { $0 == nil }) {
                return GatewayStoreError(
                    .unknownDevice, "device '\(notification.jobs[index].deviceID)' is not registered in this app",
                    field: "devices[\(index)]")
            }
            let changed = notification.jobs.indices.first { index in
                let job = notification.jobs[index]
                guard let keyID = job.keyID, let device = registered[index] else { return false }
                return device.keyID != keyID || device.address.platform != job.body.platform
            }
            return changed.map { GatewayStoreError.deviceKeyChanged(deviceID: notification.jobs[$0].deviceID, index: $0) }
        }
        // 2. The notifications whose devices are all known; a key already taken inserts nothing (ON CONFLICT waits
        //    for a concurrent transaction holding the key, then finds its row). Rows go in in key order, the same in
        //    every transaction, so two nodes' batches holding the same keys wait for each other instead of
        //    deadlocking; of two with one key in this batch, the first is inserted.
        var inserted = Set<UUID>()
        var notifications = PostgresInsertNotifications()
        for notification in batch.indices.filter({ refused[$0] == nil }).map({ batch[$0] }) {
            notifications.ids.append(notification.id)
            notifications.appIDs.append(notification.appID)
            notifications.idempotencyKeys.append(notification.idempotencyKey ?? "")
            notifications.priorities.append(notification.priority)
            notifications.collapseIDs.append(notification.collapseID ?? "")
            notifications.createdAt.append(Millis.from(notification.createdAt))
            notifications.expiresAt.append(Millis.from(notification.expiresAt))
            notifications.requestDigests.append(
                notification.idempotencyKey == nil ? "" : (notification.requestDigest ?? ""))
            notifications.kinds.append(notification.kind.storedText ?? "")
            notifications.skippedDevices.append(SkippedDevice.storedText(notification.skippedDevices) ?? "")
        }
        if !notifications.ids.isEmpty {
            for try await id in try await connection.execute(notifications, logger: logger) { inserted.insert(id) }
        }
        // 3. The jobs of the inserted notifications and their message ids, in one statement.
        let fresh = batch.filter { inserted.contains($0.id) }
        struct ClaimKey: Hashable {
            var notificationID: UUID
            var deviceID: String
        }
        var claimedIDs: [ClaimKey: Int64] = [:]  // the ids of jobs enqueued under a lease
        if !fresh.isEmpty {
            var jobs = PostgresInsertJobs()
            for notification in fresh {
                for job in notification.jobs {
                    let key = DeviceKey(appID: notification.appID, deviceID: job.deviceID)
                    let unregistered = known[key]?.unregistered == true
                    let lease = unregistered ? nil : notification.lease
                    jobs.notificationIDs.append(notification.id)
                    jobs.appIDs.append(notification.appID)
                    jobs.deviceIDs.append(job.deviceID)
                    jobs.bodies.append(ByteBuffer(bytes: job.body.bytes))
                    jobs.states.append(
                        unregistered
                            ? JobState.unregistered.rawValue
                            : (lease == nil ? JobState.queued.rawValue : JobState.claimed.rawValue))
                    jobs.reasons.append(unregistered ? "DeviceUnregistered" : "")
                    jobs.createdAt.append(Millis.from(notification.createdAt))
                    jobs.owners.append(lease?.owner ?? "")
                    jobs.leaseEnds.append(lease.map { Millis.from($0.expiresAt) } ?? 0)
                    jobs.tokens.append(lease == nil ? "" : known[key]?.address.token ?? "")
                    jobs.messageIDs.append(job.messageID ?? "")
                    jobs.keyIDs.append(job.keyID ?? "")
                }
            }
            for try await row in try await connection.execute(jobs, logger: logger) {
                claimedIDs[ClaimKey(notificationID: row.notificationID, deviceID: row.deviceID)] = row.id
            }
        }
        // 4. The notifications a key made replays (whatever their devices now), as they are stored.
        struct Stored: Sendable {
            var id: UUID
            var jobs: Int
            var digest: String?
            var skipped: [SkippedDevice]
        }
        var stored: [DeviceKey: Stored] = [:]  // by app id and idempotency key
        let keyed = batch.filter { !inserted.contains($0.id) && $0.idempotencyKey != nil }
        if !keyed.isEmpty {
            let rows = try await connection.query(
                """
                SELECT n.app_id, n.idempotency_key, n.id, (SELECT COUNT(*) FROM jobs WHERE notification_id = n.id),
                       n.request_digest, n.skipped_devices
                FROM notifications n
                JOIN (SELECT DISTINCT * FROM unnest(\(keyed.map(\.appID))::text[],
                                                    \(keyed.map { $0.idempotencyKey ?? "" })::text[])) AS k(app_id, key)
                    ON n.app_id = k.app_id AND n.idempotency_key = k.key
                """, logger: logger)
            for try await (appID, key, id, jobs, digest, skipped)
                in rows.decode((String, String, UUID, Int, String?, String?).self)
            {
                stored[DeviceKey(appID: appID, deviceID: key)] = Stored(
                    id: id, jobs: jobs, digest: digest, skipped: SkippedDevice.devices(storedText: skipped))
            }
        }
        return try batch.indices.map { index in
            let notification = batch[index]
            if inserted.contains(notification.id) {
                var claimed: [ClaimedJob] = []
                if let lease = notification.lease {
                    for job in notification.jobs {
                        let key = DeviceKey(appID: notification.appID, deviceID: job.deviceID)
                        guard let id = claimedIDs[ClaimKey(notificationID: notification.id, deviceID: job.deviceID)],
                            let address = known[key]?.address
                        else { continue }
                        claimed.append(
                            ClaimedJob(
                                id: id, notificationID: notification.id, appID: notification.appID,
                                deviceID: job.deviceID, address: address, body: job.body,
                                priority: notification.priority, collapseID: notification.collapseID,
                                expiresAt: notification.expiresAt,
                                acceptedAt: Millis.date(Millis.from(notification.createdAt)), attempts: 1,
                                leaseExpiresAt: lease.expiresAt))
                    }
                }
                return .success(
                    EnqueueResult(
                        id: notification.id, replayed: false, jobCount: notification.jobs.count, claimed: claimed))
            }
            if let key = notification.idempotencyKey, let row = stored[DeviceKey(appID: notification.appID, deviceID: key)] {
                return .success(
                    EnqueueResult(
                        id: row.id, replayed: true, jobCount: row.jobs, requestDigest: row.digest,
                        skippedDevices: row.skipped))
            }
            if let error = refused[index] { return .failure(error) }
            throw GatewayStoreError(.database, "PostgreSQL: an idempotency key conflicted but no row was found")
        }
    }

    /// Refreshes the planner's statistics of the queue off the request path, every ``PostgresStatistics/interval``
    /// while the queue keeps growing (``PostgresStatistics`` says why).
    private func analyzeInBackground() {
        let statistics = self.statistics
        let logger = self.logger
        Task { [self] in
            repeat {
                do {
                    _ = try await run("analyzing the queue") { connection, logger in
                        // The columns plans depend on, not the sealed bodies (analyzing those too cost 120 ms a time
                        // at 60,000 jobs). Vacuuming is left to autovacuum, which migration 12 has look at `jobs`
                        // often: a VACUUM here every second of a burst took 1.3 s of the server's CPU in a 60,000
                        // delivery run, and without it the runs were no slower.
                        try await connection.query(
                            "ANALYZE jobs (state, app_id, device_id, notification_id, not_before, lease_expires_at)",
                            logger: logger)
                        try await connection.query("ANALYZE notifications", logger: logger)
                        // Devices only past autovacuum's own threshold (50 rows and a tenth of the table changed
                        // since its last analyze), now rather than at the launcher's next look: a burst to devices
                        // that just registered is otherwise planned as if the table held a handful, and each
                        // claimed job's device lookup walks every device of the app along another index.
                        let stale = try await connection.query(
                            """
                            SELECT s.n_mod_since_analyze > 50 + 0.1 * GREATEST(c.reltuples, 0)
                            FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
                            WHERE s.relid = 'devices'::regclass
                            """, logger: logger)
                        var devicesStale = false
                        for try await isStale in stale.decode(Bool.self) { devicesStale = isStale }
                        if devicesStale { try await connection.query("ANALYZE devices", logger: logger) }
                    }
                } catch {
                    logger.warning("ANALYZE of the queue failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: PostgresStatistics.interval)
            } while statistics.again()
        }
    }

    public func claim(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws -> [ClaimedJob] {
        guard limit > 0 else { return [] }
        let nowMillis = Millis.from(now)
        let leaseEnd = nowMillis + Millis.from(leaseDuration)
        // One statement, atomic on its own (its implicit transaction holds the row locks): no BEGIN/COMMIT round trips.
        // Walks that stop at `limit` — leases that ran out (few), then each app's queued jobs in the order they
        // fall due, along `jobs_app_due` — never a sort of the whole queue (which made every claim cost the queue's
        // depth; ordering ties by id as well made PostgreSQL read every job due at the same millisecond, a whole
        // fan-out). `picked` takes the apps' jobs in turn (each app's first, then each app's second, …), so apps
        // share a claim evenly and one app's backlog never holds back another's jobs. A row a walk locks beyond
        // what `picked` keeps is released when the statement ends. The device and notification checks are scalar
        // subqueries, not joins: PostgreSQL never pulls those up, so `jobs` stays the only table a walk can start
        // from. As joins, a claim planned from the statistics of a table that had just been filled (the queue grows
        // faster than ANALYZE runs) started from `devices` and read and sorted every queued job: 20-60 ms a claim.
        // The claimed jobs' device and notification fields are looked up once per claimed job (a `LATERAL … LIMIT 1`
        // is never flattened into a join), and the UPDATE joins nothing but `picked`: joined, a claim planned from
        // stale statistics read every job of the claimed jobs' notifications. Statistics still choose the index of
        // each lookup, which is why the store refreshes them itself after bursts (`analyzeInBackground`).
        let statement = Self.claimStatement(owner: owner, limit: limit, now: nowMillis, leaseEnd: leaseEnd)
        return try await run("claiming jobs", writes: true) { connection, logger in
            let rows = try await connection.query(statement, logger: logger)
            var claimed: [ClaimedJob] = []
            for try await (id, notificationID, appID, deviceID, platform, token, environment, body, priority,
                collapseID, expiresAt, attempts, acceptedAt) in rows.decode(
                    (Int64, UUID, String, String, String, String, String, Data, Int, String?, Int64, Int, Int64).self)
            {
                claimed.append(
                    ClaimedJob(
                        id: id, notificationID: notificationID, appID: appID, deviceID: deviceID,
                        address: PushAddress(token: token, platform: platform, environment: environment),
                        body: SealedBody(storedBytes: [UInt8](body)), priority: priority, collapseID: collapseID,
                        expiresAt: Millis.date(expiresAt), acceptedAt: Millis.date(acceptedAt), attempts: attempts,
                        leaseExpiresAt: Millis.date(leaseEnd)))
            }
            return claimed.sorted { $0.id < $1.id }
        }
    }

    /// The claim's statement (``claim(owner:limit:leaseDuration:now:)`` says what it does), prefixed by `prefix`
    /// (tests read its plan with `EXPLAIN`).
    static func claimStatement(owner: String, limit: Int, now nowMillis: Int64, leaseEnd: Int64, prefix: String = "")
        -> PostgresQuery
    {
        """
        \(unescaped: prefix)
        WITH leased AS (
            SELECT j.id, j.app_id, j.device_id, j.notification_id, 0 AS part, j.lease_expires_at AS due FROM jobs j
            WHERE j.state = 'claimed' AND j.lease_expires_at <= \(nowMillis)
              AND (SELECT d.unregistered_at IS NULL FROM devices d
                   WHERE d.app_id = j.app_id AND d.device_id = j.device_id)
              AND (SELECT n.expires_at FROM notifications n WHERE n.id = j.notification_id) > \(nowMillis)
            ORDER BY j.lease_expires_at, j.id
            LIMIT \(limit)
            FOR UPDATE OF j SKIP LOCKED
        ), queued AS (
            SELECT due_of_app.*, 1 AS part,
                   row_number() OVER (PARTITION BY a.id ORDER BY due_of_app.due) AS turn
            FROM apps a CROSS JOIN LATERAL (
                SELECT j.id, j.app_id, j.device_id, j.notification_id, j.not_before AS due FROM jobs j
                WHERE j.state = 'queued' AND j.app_id = a.id AND j.not_before <= \(nowMillis)
                  AND (SELECT d.unregistered_at IS NULL FROM devices d
                       WHERE d.app_id = j.app_id AND d.device_id = j.device_id)
                  AND (SELECT n.expires_at FROM notifications n WHERE n.id = j.notification_id)
                      > \(nowMillis)
                ORDER BY j.not_before
                LIMIT \(limit)
                FOR UPDATE OF j SKIP LOCKED
            ) due_of_app
        ), picked AS (
            SELECT due_jobs.id, d.platform, d.push_token, d.environment, n.priority, n.collapse_id, n.expires_at,
                   n.created_at
            FROM (
                SELECT id, app_id, device_id, notification_id FROM (
                    SELECT id, app_id, device_id, notification_id, part, 0 AS turn, due FROM leased
                    UNION ALL
                    SELECT id, app_id, device_id, notification_id, part, turn, due FROM queued
                ) due_jobs
                ORDER BY part, turn, due, id
                LIMIT \(limit)
            ) due_jobs
            CROSS JOIN LATERAL (
                SELECT d.platform, d.push_token, d.environment FROM devices d
                WHERE d.app_id = due_jobs.app_id AND d.device_id = due_jobs.device_id LIMIT 1) d
            CROSS JOIN LATERAL (
                SELECT n.priority, n.collapse_id, n.expires_at, n.created_at FROM notifications n
                WHERE n.id = due_jobs.notification_id LIMIT 1) n
        )
        UPDATE jobs SET state = 'claimed', lease_owner = \(owner), lease_expires_at = \(leaseEnd),
            attempts = jobs.attempts + 1, updated_at = \(nowMillis), push_token = picked.push_token,
            requests = jobs.requests + (CASE WHEN jobs.state = 'claimed' THEN 1 ELSE 0 END)
        FROM picked
        WHERE jobs.id = picked.id
        RETURNING jobs.id, jobs.notification_id, jobs.app_id, jobs.device_id, picked.platform, picked.push_token,
                  picked.environment, jobs.sealed_body, picked.priority, picked.collapse_id, picked.expires_at,
                  jobs.attempts, picked.created_at
        """
    }

    /// The plan of a claim of `limit` jobs as `EXPLAIN (ANALYZE, BUFFERS)` gives it (one line each), run on one of the
    /// store's own sessions in a transaction that is rolled back (nothing is claimed).
    func explainClaim(limit: Int, now: Date) async throws -> String {
        let nowMillis = Millis.from(now)
        let statement = Self.claimStatement(
            owner: "explain", limit: limit, now: nowMillis, leaseEnd: nowMillis + 60_000,
            prefix: "EXPLAIN (ANALYZE, BUFFERS)")
        return try await explainRolledBack(statement)
    }

    /// The plan of the enqueue's device lookup (``PostgresEnqueueDevices``) of `devices` in app `appID` as a store
    /// session runs it once the statement is on its generic plan — `EXPLAIN (ANALYZE, BUFFERS)`, one line each — in a
    /// transaction that is rolled back.
    /// - Parameters:
    ///   - appID: The app.
    ///   - devices: Device ids: letters, digits, `-`, `_` and `.` only (they are written into the statement).
    func explainEnqueueDevices(appID: String, devices: [String]) async throws -> String {
        guard Self.isPlain(appID), devices.allSatisfy(Self.isPlain) else {
            throw GatewayStoreError(.invalidArgument, "explainEnqueueDevices takes plain ids only")
        }
        let apps = Self.textArray(Array(repeating: appID, count: devices.count))
        return try await explainGeneric(
            PostgresEnqueueDevices.sql, types: "text[], text[]", arguments: "\(apps), \(Self.textArray(devices))")
    }

    /// The plan of a batch of job ends (``PostgresFinishJobs``) — each of `jobIDs` sent, as lease owner `owner` —
    /// as a store session runs it once the statement is on its generic plan, from `EXPLAIN (ANALYZE, BUFFERS)`, in
    /// a transaction that is rolled back (nothing is ended).
    /// - Parameters:
    ///   - jobIDs: The jobs.
    ///   - owner: The lease owner: letters, digits, `-`, `_` and `.` only (written into the statement).
    func explainFinish(jobIDs: [Int64], owner: String) async throws -> String {
        guard Self.isPlain(owner) else { throw GatewayStoreError(.invalidArgument, "explainFinish takes a plain owner") }
        let count = jobIDs.count
        let arguments = [
            "ARRAY[\(jobIDs.map(String.init).joined(separator: ","))]::bigint[]",
            Self.textArray(Array(repeating: owner, count: count)), Self.textArray(Array(repeating: "sent", count: count)),
            Self.textArray(Array(repeating: "apns-id", count: count)), Self.textArray(Array(repeating: "", count: count)),
            "array_fill(-1::bigint, ARRAY[\(count)])", "array_fill(1::bigint, ARRAY[\(count)])",
            Self.textArray(Array(repeating: "", count: count)), "array_fill(0::bigint, ARRAY[\(count)])",
        ]
        return try await explainGeneric(
            PostgresFinishJobs.sql, types: "bigint[], text[], text[], text[], text[], bigint[], bigint[], text[], bigint[]",
            arguments: arguments.joined(separator: ", "))
    }

    /// `EXPLAIN (ANALYZE, BUFFERS)` of `sql` prepared with parameter `types` and run with `arguments` (SQL text) on
    /// its generic plan, on one of the store's sessions, in a transaction that is rolled back.
    private func explainGeneric(_ sql: String, types: String, arguments: String) async throws -> String {
        try await explainRolledBack(
            PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, BUFFERS) EXECUTE explained(\(arguments))"),
            setUp: [
                "SET LOCAL plan_cache_mode = force_generic_plan",
                PostgresQuery(unsafeSQL: "PREPARE explained(\(types)) AS \(sql)"),
            ],
            tearDown: ["DEALLOCATE explained"])  // a prepared statement outlives the transaction
    }

    /// The lines `explain` answers, run after `setUp` on one of the store's sessions in a transaction that is rolled
    /// back, then `tearDown`.
    private func explainRolledBack(
        _ explain: PostgresQuery, setUp: [PostgresQuery] = [], tearDown: [PostgresQuery] = []
    ) async throws -> String {
        try await run("explaining a statement") { connection, logger in
            try await connection.query("BEGIN", logger: logger)
            var plan = ""
            do {
                for statement in setUp { try await connection.query(statement, logger: logger) }
                for try await line in try await connection.query(explain, logger: logger).decode(String.self) {
                    plan += line + "\n"
                }
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                for statement in tearDown { _ = try? await connection.query(statement, logger: logger) }
                throw error
            }
            try await connection.query("ROLLBACK", logger: logger)
            for statement in tearDown { try await connection.query(statement, logger: logger) }
            return plan
        }
    }

    /// Whether `text` can be written into a statement as is: letters, digits, `-`, `_` and `.` only.
    private static func isPlain(_ text: String) -> Bool {
        text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }

    /// A `text[]` literal of plain strings (``isPlain(_:)``) or empty ones.
    private static func textArray(_ items: [String]) -> String {
        "ARRAY[" + items.map { "'\($0)'" }.joined(separator: ",") + "]::text[]"
    }

    public func finish(
        jobID: Int64, owner: String, outcome: JobOutcome, requests: Int, transientReason: String?, now: Date
    ) async throws -> Bool {
        try await finish(
            JobFinish(
                jobID: jobID, owner: owner, outcome: outcome, requests: requests, transientReason: transientReason,
                now: now))
    }

    /// One job's end, on its own (with its device and the webhook's outbox when `unregistered`).
    private func finish(_ end: JobFinish) async throws -> Bool {
        let (jobID, owner, outcome, transientReason) = (end.jobID, end.owner, end.outcome, end.transientReason)
        let webhookEvent = end.webhookEvent
        let now = Millis.from(end.now)
        let requests = max(0, end.requests)
        // One UPDATE is atomic on its own: only an unregistered outcome (job, device, the device's other jobs) needs a
        // transaction, which costs two more round trips (BEGIN, COMMIT) per finished job.
        let body: @Sendable (PostgresConnection, Logger) async throws -> Bool = { connection, logger in
            // Every statement changes the job only while `owner` still holds it.
            let query: PostgresQuery
            switch outcome {
            case .sent(let apnsID):
                query = """
                    UPDATE jobs SET state = 'sent', apns_id = \(apnsID), failure_reason = NULL, lease_owner = NULL,
                        requests = jobs.requests + \(requests), transient_reason = COALESCE(\(transientReason), jobs.transient_reason),
                        lease_expires_at = NULL, updated_at = \(now)
                    WHERE id = \(jobID) AND state = 'claimed' AND lease_owner = \(owner)
                    RETURNING app_id, device_id, push_token
                    """
            case .failed(let reason):
                query = """
                    UPDATE jobs SET state = 'failed', failure_reason = \(reason), lease_owner = NULL,
                        requests = jobs.requests + \(requests), transient_reason = COALESCE(\(transientReason), jobs.transient_reason),
                        lease_expires_at = NULL, updated_at = \(now)
                    WHERE id = \(jobID) AND state = 'claimed' AND lease_owner = \(owner)
                    RETURNING app_id, device_id, push_token
                    """
            case .retry(let reason, let notBefore):
                query = """
                    UPDATE jobs SET state = 'queued', failure_reason = \(reason), not_before = \(Millis.from(notBefore)),
                        requests = jobs.requests + \(requests), transient_reason = COALESCE(\(transientReason), jobs.transient_reason),
                        lease_owner = NULL, lease_expires_at = NULL, updated_at = \(now)
                    WHERE id = \(jobID) AND state = 'claimed' AND lease_owner = \(owner)
                    RETURNING app_id, device_id, push_token
                    """
            case .expired:
                query = """
                    UPDATE jobs SET state = 'expired', lease_owner = NULL, lease_expires_at = NULL, updated_at = \(now),
                        requests = jobs.requests + \(requests), transient_reason = COALESCE(\(transientReason), jobs.transient_reason)
                    WHERE id = \(jobID) AND state = 'claimed' AND lease_owner = \(owner)
                    RETURNING app_id, device_id, push_token
                    """
            case .unregistered(let reason):
                query = """
                    UPDATE jobs SET state = 'unregistered', failure_reason = \(reason), lease_owner = NULL,
                        requests = jobs.requests + \(requests), transient_reason = COALESCE(\(transientReason), jobs.transient_reason),
                        lease_expires_at = NULL, updated_at = \(now)
                    WHERE id = \(jobID) AND state = 'claimed' AND lease_owner = \(owner)
                    RETURNING app_id, device_id, push_token
                    """
            }
            let rows = try await connection.query(query, logger: logger)
            var job: (String, String, String?)?
            for try await row in rows.decode((String, String, String?).self) { job = row }
            guard let (appID, deviceID, token) = job else { return false }
            if case .unregistered(let reason) = outcome, let token {
                // The device is marked only if its token is still the one this job was sent to.
                let marked = try await Self.count(
                    connection.query(
                        """
                        UPDATE devices SET unregistered_at = COALESCE(unregistered_at, \(now))
                        WHERE app_id = \(appID) AND device_id = \(deviceID) AND push_token = \(token) RETURNING 1
                        """, logger: logger))
                if marked > 0 {
                    try await Self.endOpenJobs(
                        appID: appID, deviceID: deviceID, reason: reason, now: now, connection, logger)
                    if let webhookEvent {
                        try await Self.insertWebhookEvents([WebhookOutboxRow(webhookEvent)], now: [now], connection, logger)
                    }
                }
            }
            return true
        }
        if case .unregistered = outcome {
            return try await transaction("finishing job \(jobID)", body)
        }
        return try await run("finishing job \(jobID)", writes: true, body)
    }

    /// Writes a batch of jobs' ends: every end but `unregistered` in one `UPDATE … FROM unnest(…)` statement (one
    /// round trip for the sends that finished together, instead of one each), each `unregistered` end on its own
    /// (it marks the device in a transaction).
    public func finish(_ batch: [JobFinish]) async throws -> [Bool] {
        // Every finished job leaves a dead row version behind in `jobs` and its indexes (the queue's churn).
        if statistics.added(batch.count) { analyzeInBackground() }
        var held = [Bool](repeating: false, count: batch.count)
        var plain: [(index: Int, end: JobFinish)] = []
        for (index, end) in batch.enumerated() {
            if case .unregistered = end.outcome {
                held[index] = try await finish(end)
            } else {
                plain.append((index, end))
            }
        }
        guard !plain.isEmpty else { return held }
        var statement = PostgresFinishJobs()
        for (_, end) in plain {
            let (state, apnsID, reason, notBefore): (String, String, String, Int64)
            switch end.outcome {
            case .sent(let id): (state, apnsID, reason, notBefore) = ("sent", id, "", -1)
            case .failed(let why): (state, apnsID, reason, notBefore) = ("failed", "", why, -1)
            case .retry(let why, let at): (state, apnsID, reason, notBefore) = ("queued", "", why, Millis.from(at))
            case .expired: (state, apnsID, reason, notBefore) = ("expired", "", "", -1)
            case .unregistered: continue  // written above
            }
            statement.ids.append(end.jobID)
            statement.owners.append(end.owner)
            statement.requests.append(Int64(max(0, end.requests)))
            statement.transients.append(end.transientReason ?? "")
            statement.nows.append(Millis.from(end.now))
            statement.states.append(state)
            statement.apnsIDs.append(apnsID)
            statement.reasons.append(reason)
            statement.notBefores.append(notBefore)
        }
        let updated: Set<Int64> = try await run("finishing \(plain.count) jobs", writes: true) { [statement] connection, logger in
            var returned = Set<Int64>()
            for try await id in try await connection.execute(statement, logger: logger) { returned.insert(id) }
            return returned
        }
        for (index, end) in plain { held[index] = updated.contains(end.jobID) }
        return held
    }

    public func expireOverdue(now: Date) async throws -> [PushPlatform: Int] {
        let now = Millis.from(now)
        return try await run("expiring jobs", writes: true) { connection, logger in
            let rows = try await connection.query(
                """
                WITH expired AS (
                    UPDATE jobs SET state = 'expired', lease_owner = NULL, lease_expires_at = NULL, updated_at = \(now)
                    WHERE (state = 'queued' OR (state = 'claimed' AND lease_expires_at <= \(now)))
                      AND notification_id IN (SELECT id FROM notifications WHERE expires_at <= \(now))
                    RETURNING app_id, device_id)
                SELECT d.platform, COUNT(*) FROM expired e
                JOIN devices d ON d.app_id = e.app_id AND d.device_id = e.device_id
                GROUP BY d.platform
                """, logger: logger)
            var expired: [PushPlatform: Int] = [:]
            for try await (name, count) in rows.decode((String, Int64).self) {
                guard let platform = PushPlatform(rawValue: name) else {
                    throw GatewayStoreError(.database, "a device's platform '\(name)' is neither apns nor fcm")
                }
                expired[platform] = Int(count)
            }
            return expired
        }
    }

    public func purgeExpired(before cutoff: Date, limit: Int) async throws -> Int {
        let cutoff = Millis.from(cutoff)
        let limit = max(1, min(limit, 10_000))
        return try await run("purging expired notifications", writes: true) { connection, logger in
            try await connection.query(
                """
                DELETE FROM receipts WHERE (app_id, receipt_id) IN (
                    SELECT app_id, receipt_id FROM receipts WHERE expires_at < \(cutoff) ORDER BY expires_at
                    LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                """, logger: logger)
            try await connection.query(
                """
                DELETE FROM webhook_outbox WHERE id IN (
                    SELECT id FROM webhook_outbox WHERE given_up_at < \(cutoff) ORDER BY given_up_at
                    LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                """, logger: logger)
            // Jobs and their message ids go with their notification, in the same statement (they have no foreign
            // keys: migration 11). SKIP LOCKED: nodes purging at once share the work.
            return try await Self.count(
                connection.query(
                    """
                    WITH gone AS (
                        DELETE FROM notifications WHERE id IN (
                            SELECT id FROM notifications WHERE expires_at < \(cutoff) ORDER BY expires_at
                            LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                        RETURNING id
                    ), gone_jobs AS (
                        DELETE FROM jobs WHERE notification_id IN (SELECT id FROM gone) RETURNING id
                    ), gone_messages AS (
                        DELETE FROM job_messages WHERE job_id IN (SELECT id FROM gone_jobs)
                    )
                    SELECT 1 FROM gone
                    """, logger: logger))
        }
    }

    public func notificationStatus(appID: String, notificationID: UUID) async throws -> NotificationStatus? {
        try await run("reading notification status") { connection, logger in
            let rows = try await connection.query(
                """
                SELECT priority, collapse_id, created_at, expires_at, withdrawn_at, kind, skipped_devices
                FROM notifications WHERE id = \(notificationID) AND app_id = \(appID)
                """, logger: logger)
            var header: (Int, String?, Int64, Int64, Int64?, String?, String?)?
            for try await row in rows.decode((Int, String?, Int64, Int64, Int64?, String?, String?).self) { header = row }
            guard let (priority, collapseID, createdAt, expiresAt, withdrawnAt, kind, skipped) = header else { return nil }
            var deliveries: [NotificationStatus.Delivery] = []
            let jobs = try await connection.query(
                """
                SELECT device_id, state, apns_id, failure_reason,
                           requests + (CASE WHEN state = 'claimed' THEN 1 ELSE 0 END) AS requests, transient_reason,
                           updated_at, receipt_outcome, receipt_reason, receipt_delivered, receipt_failed,
                           receipt_device_time, receipt_at, receipt_count
                FROM jobs WHERE notification_id = \(notificationID) ORDER BY device_id
                """, logger: logger)
            for try await row in jobs {
                let (deviceID, state, apnsID, reason, requests, transientReason, updatedAt) = try row.decode(
                    (String, String, String?, String?, Int, String?, Int64).self)
                let (_, _, _, _, _, _, _, outcome, receiptReason, delivered, failed, deviceTime, receivedAt, count) =
                    try row.decode(
                        (String, String, String?, String?, Int, String?, Int64, String?, String?, Int?, Int?, Int64?,
                         Int64?, Int).self)
                var receipt: JobReceipt?
                if let outcome {
                    receipt = JobReceipt(
                        outcome: outcome, reason: receiptReason, attachmentsDelivered: delivered ?? 0,
                        attachmentsFailed: failed ?? 0, deviceTime: Millis.date(deviceTime ?? 0),
                        receivedAt: Millis.date(receivedAt ?? 0), count: count)
                }
                deliveries.append(
                    NotificationStatus.Delivery(
                        deviceID: deviceID, state: JobState(rawValue: state) ?? .failed, apnsID: apnsID, reason: reason,
                        attempts: requests, lastTransientReason: transientReason, updatedAt: Millis.date(updatedAt),
                        receipt: receipt))
            }
            return NotificationStatus(
                id: notificationID, appID: appID, priority: priority, collapseID: collapseID,
                createdAt: Millis.date(createdAt), expiresAt: Millis.date(expiresAt), deliveries: deliveries,
                withdrawnAt: withdrawnAt.map(Millis.date), kind: NotificationKind(storedText: kind),
                skippedDevices: SkippedDevice.devices(storedText: skipped))
        }
    }

    public func withdraw(appID: String, notificationID: UUID, now: Date) async throws -> Withdrawal? {
        let nowMillis = Millis.from(now)
        return try await transaction("withdrawing a notification") { connection, logger in
            // The row lock orders concurrent withdrawals of one notification.
            let rows = try await connection.query(
                """
                SELECT collapse_id, expires_at, withdrawn_at FROM notifications
                WHERE id = \(notificationID) AND app_id = \(appID) FOR UPDATE
                """, logger: logger)
            var header: (String?, Int64, Int64?)?
            for try await row in rows.decode((String?, Int64, Int64?).self) { header = row }
            guard let (collapseID, expiresAt, withdrawnAt) = header else { return nil }
            if withdrawnAt == nil {
                try await connection.query(
                    "UPDATE notifications SET withdrawn_at = \(nowMillis) WHERE id = \(notificationID)", logger: logger)
            }
            let withdrawn = try await Self.count(
                connection.query(
                    """
                    UPDATE jobs SET state = 'withdrawn',
                        failure_reason = CASE WHEN state = 'claimed' THEN \(Withdrawal.reasonInFlight)
                                              ELSE \(Withdrawal.reasonQueued) END,
                        lease_owner = NULL, lease_expires_at = NULL, updated_at = \(nowMillis)
                    WHERE notification_id = \(notificationID) AND state IN ('queued', 'claimed')
                    RETURNING 1
                    """, logger: logger))
            var reached: [String] = []
            let devices = try await connection.query(
                """
                SELECT device_id FROM jobs
                WHERE notification_id = \(notificationID)
                  AND (state = 'sent' OR (state = 'withdrawn' AND failure_reason = \(Withdrawal.reasonInFlight)))
                ORDER BY device_id
                """, logger: logger)
            for try await device in devices.decode(String.self) { reached.append(device) }
            return Withdrawal(
                collapseID: collapseID, expiresAt: Millis.date(expiresAt), withdrawnNow: withdrawn,
                reachedDevices: reached, alreadyWithdrawn: withdrawnAt != nil)
        }
    }

    public func device(appID: String, keyID: String) async throws -> StoredDevice? {
        try await run("reading a device by key") { connection, logger in
            try await Self.devices(
                connection.query(
                    """
                    \(unescaped: Self.deviceColumns)
                    WHERE app_id = \(appID) AND key_id = \(keyID) AND unregistered_at IS NULL LIMIT 1
                    """, logger: logger)
            ).first
        }
    }

    /// One transaction for the whole batch (the receipt endpoint's group commit) in three statements whatever its
    /// size: the jobs of every receipt (locked), the receipt ids of those found, then the jobs' receipt fields. Each
    /// receipt is answered as ``recordReceipt(_:)`` would answer it alone, in order: a receipt id twice in the batch
    /// is a replay the second time, and of several receipts about one job only the first of a job without one sets
    /// its fields (the others are counted).
    public func recordReceipts(_ receipts: [ReceivedReceipt]) async throws -> [ReceiptRecording] {
        guard !receipts.isEmpty else { return [] }
        return try await transaction("recording \(receipts.count) receipts") { connection, logger in
            try await Self.recordBatch(receipts, connection, logger)
        }
    }

    /// ``recordReceipts(_:)``'s statements, in the caller's transaction.
    private static func recordBatch(
        _ receipts: [ReceivedReceipt], _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [ReceiptRecording] {
        struct Job {
            var id: Int64
            var notificationID: UUID
            var deviceID: String
            var hasReceipt: Bool
            var receiptCount: Int
        }
        // 1. The job each receipt is about (by position in the batch), locked until the end.
        var jobs: [Int: Job] = [:]
        let rows = try await connection.query(
            """
            SELECT r.position, j.id, j.notification_id, j.device_id, j.receipt_outcome IS NOT NULL, j.receipt_count
            FROM unnest(\(receipts.map(\.appID))::text[], \(receipts.map(\.messageID))::text[],
                        \(receipts.map(\.keyID))::text[]) WITH ORDINALITY AS r(app_id, message_id, key_id, position)
            JOIN job_messages m ON m.app_id = r.app_id AND m.message_id = r.message_id AND m.key_id = r.key_id
            JOIN jobs j ON j.id = m.job_id
            ORDER BY j.id
            FOR UPDATE OF j
            """, logger: logger)
        for try await (position, id, notificationID, deviceID, hasReceipt, receiptCount) in rows.decode(
            (Int64, Int64, UUID, String, Bool, Int).self)
        {
            jobs[Int(position) - 1] = Job(
                id: id, notificationID: notificationID, deviceID: deviceID, hasReceipt: hasReceipt,
                receiptCount: receiptCount)
        }
        let found = receipts.indices.filter { jobs[$0] != nil }
        guard !found.isEmpty else { return receipts.map { _ in .unknownMessage } }
        // 2. The receipt ids of those found: an id already kept (or earlier in this batch) is a replay.
        struct ReceiptKey: Hashable {
            var appID: String
            var receiptID: String
        }
        var fresh = Set<ReceiptKey>()
        let inserted = try await connection.query(
            """
            INSERT INTO receipts (app_id, receipt_id, expires_at)
            SELECT * FROM unnest(\(found.map { receipts[$0].appID })::text[], \(found.map { receipts[$0].receiptID })::text[],
                                 \(found.map { Millis.from(receipts[$0].receiptExpiresAt) })::bigint[])
            ON CONFLICT DO NOTHING
            RETURNING app_id, receipt_id
            """, logger: logger)
        for try await (appID, receiptID) in inserted.decode((String, String).self) {
            fresh.insert(ReceiptKey(appID: appID, receiptID: receiptID))
        }
        // 3. The answers in order, and what each job gets: its fields from its first receipt if it had none, and the
        //    count of the receipts recorded now. A receipt about a job that is full (counting this batch's) is
        //    refused before the replay check, as one at a time; the id it inserted in step 2 is not kept.
        var answers = [ReceiptRecording](repeating: .unknownMessage, count: receipts.count)
        var withReceipt = Set<Int64>()
        var counts: [Int64: Int] = [:]
        var firsts: [Int64: Int] = [:]  // job id: position of the receipt that sets its fields
        var events: [WebhookOutboxRow] = []  // for the webhook's outbox
        var eventTimes: [Int64] = []
        var unkept: [ReceiptKey] = []
        for index in found {
            let receipt = receipts[index], job = jobs[index]!
            let key = ReceiptKey(appID: receipt.appID, receiptID: receipt.receiptID)
            guard job.receiptCount + counts[job.id, default: 0] < ReceivedReceipt.maxPerJob else {
                if fresh.remove(key) != nil { unkept.append(key) }
                answers[index] = .limitReached
                continue
            }
            guard fresh.remove(key) != nil else {
                answers[index] = .replayed
                continue
            }
            let first = !job.hasReceipt && !withReceipt.contains(job.id)
            withReceipt.insert(job.id)
            if first {
                firsts[job.id] = index
                if receipt.forwardsToWebhook {
                    events.append(WebhookOutboxRow(receiptOf: job.id, appID: receipt.appID, deviceID: job.deviceID))
                    eventTimes.append(Millis.from(receipt.receivedAt))
                }
            }
            counts[job.id, default: 0] += 1
            answers[index] = .recorded(notificationID: job.notificationID, deviceID: job.deviceID, first: first)
        }
        if !unkept.isEmpty {
            try await connection.query(
                """
                DELETE FROM receipts USING unnest(\(unkept.map(\.appID))::text[], \(unkept.map(\.receiptID))::text[])
                    AS u(app_id, receipt_id)
                WHERE receipts.app_id = u.app_id AND receipts.receipt_id = u.receipt_id
                """, logger: logger)
        }
        if !counts.isEmpty {
            let ids = counts.keys.sorted()
            let setters = ids.map { firsts[$0] }
            func field<T>(_ value: (ReceivedReceipt) -> T, _ empty: T) -> [T] {
                setters.map { $0.map { value(receipts[$0]) } ?? empty }
            }
            try await connection.query(
                """
                UPDATE jobs SET
                    receipt_outcome = CASE WHEN u.sets THEN u.outcome ELSE jobs.receipt_outcome END,
                    receipt_reason = CASE WHEN u.sets THEN NULLIF(u.reason, '') ELSE jobs.receipt_reason END,
                    receipt_delivered = CASE WHEN u.sets THEN u.delivered ELSE jobs.receipt_delivered END,
                    receipt_failed = CASE WHEN u.sets THEN u.failed ELSE jobs.receipt_failed END,
                    receipt_device_time = CASE WHEN u.sets THEN u.device_time ELSE jobs.receipt_device_time END,
                    receipt_at = CASE WHEN u.sets THEN u.received_at ELSE jobs.receipt_at END,
                    receipt_count = CASE WHEN u.sets THEN u.count ELSE jobs.receipt_count + u.count END
                FROM unnest(\(ids)::bigint[], \(setters.map { $0 != nil })::boolean[], \(field({ $0.outcome }, ""))::text[],
                            \(field({ $0.reason ?? "" }, ""))::text[], \(field({ $0.attachmentsDelivered }, 0))::integer[],
                            \(field({ $0.attachmentsFailed }, 0))::integer[],
                            \(field({ Millis.from($0.deviceTime) }, 0))::bigint[],
                            \(field({ Millis.from($0.receivedAt) }, 0))::bigint[], \(ids.map { counts[$0]! })::integer[])
                    AS u(job_id, sets, outcome, reason, delivered, failed, device_time, received_at, count)
                WHERE jobs.id = u.job_id
                """, logger: logger)
        }
        if !events.isEmpty {
            try await insertWebhookEvents(events, now: eventTimes, connection, logger)
        }
        return answers
    }

    /// ``recordReceipts(_:)`` of one: the same statements.
    public func recordReceipt(_ receipt: ReceivedReceipt) async throws -> ReceiptRecording {
        try await recordReceipts([receipt])[0]
    }

    public func queueDepth() async throws -> QueueDepth {
        try await run("reading the queue depth") { connection, logger in
            let rows = try await connection.query(
                """
                SELECT COUNT(*) FILTER (WHERE state = 'queued'), COUNT(*) FILTER (WHERE state = 'claimed')
                FROM jobs WHERE state IN ('queued', 'claimed')
                """, logger: logger)
            for try await (queued, claimed) in rows.decode((Int, Int).self) {
                return QueueDepth(queued: queued, claimed: claimed)
            }
            return QueueDepth(queued: 0, claimed: 0)
        }
    }

    public func queueSummary() async throws -> QueueSummary {
        try await run("reading the queue by app") { connection, logger in
            var apps: [QueueSummary.App] = []
            let rows = try await connection.query(
                """
                SELECT app_id, COUNT(*) FILTER (WHERE state = 'queued'), COUNT(*) FILTER (WHERE state = 'claimed'),
                    MIN(not_before) FILTER (WHERE state = 'queued')
                FROM jobs WHERE state IN ('queued', 'claimed') GROUP BY app_id ORDER BY app_id
                """, logger: logger)
            for try await (appID, queued, claimed, oldest) in rows.decode((String, Int, Int, Int64?).self) {
                apps.append(
                    QueueSummary.App(appID: appID, queued: queued, claimed: claimed, oldestQueuedDue: oldest.map(Millis.date)))
            }
            var leases: [String: Int] = [:]
            let owners = try await connection.query(
                """
                SELECT lease_owner, COUNT(*) FROM jobs
                WHERE state = 'claimed' AND lease_owner IS NOT NULL GROUP BY lease_owner
                """, logger: logger)
            for try await (owner, jobs) in owners.decode((String, Int).self) { leases[owner] = jobs }
            return QueueSummary(apps: apps, leases: leases)
        }
    }

    // MARK: Nodes

    public func node(id nodeID: String) async throws -> NodeInstance? {
        try await run("reading node '\(nodeID)'") { connection, logger in
            let rows = try await connection.query(
                """
                SELECT node_id, boot_id, host, machine_boot_id, pid, process_start, started_at, heartbeat_at
                FROM nodes WHERE node_id = \(nodeID)
                """, logger: logger)
            return try await Self.nodes(rows).first
        }
    }

    public func nodes() async throws -> [NodeInstance] {
        try await run("reading the nodes") { connection, logger in
            let rows = try await connection.query(
                """
                SELECT node_id, boot_id, host, machine_boot_id, pid, process_start, started_at, heartbeat_at
                FROM nodes ORDER BY node_id
                """, logger: logger)
            return try await Self.nodes(rows)
        }
    }

    private static func nodes(_ rows: PostgresRowSequence) async throws -> [NodeInstance] {
        var nodes: [NodeInstance] = []
        for try await (id, bootID, host, machineBootID, pid, processStart, startedAt, heartbeatAt) in rows.decode(
            (String, String, String, String, Int64, Int64, Int64, Int64).self)
        {
            nodes.append(
                NodeInstance(
                    nodeID: id, bootID: bootID, host: host, machineBootID: machineBootID, pid: Int(pid),
                    processStart: processStart, startedAt: Millis.date(startedAt), heartbeatAt: Millis.date(heartbeatAt)))
        }
        return nodes
    }

    public func takeOverNode(_ instance: NodeInstance, replacing previousBootID: String?, now: Date) async throws -> Int? {
        let now = Millis.from(now)
        let started = Millis.from(instance.startedAt)
        let pid = Int64(instance.pid)
        let prefix = instance.nodeID + "/"
        return try await transaction("taking over node '\(instance.nodeID)'") { connection, logger in
            let recorded: Int
            if let previousBootID {
                recorded = try await Self.count(
                    connection.query(
                        """
                        UPDATE nodes SET boot_id = \(instance.bootID), host = \(instance.host),
                            machine_boot_id = \(instance.machineBootID), pid = \(pid),
                            process_start = \(instance.processStart), started_at = \(started), heartbeat_at = \(now)
                        WHERE node_id = \(instance.nodeID) AND boot_id = \(previousBootID)
                        RETURNING 1
                        """, logger: logger))
            } else {
                recorded = try await Self.count(
                    connection.query(
                        """
                        INSERT INTO nodes (node_id, boot_id, host, machine_boot_id, pid, process_start, started_at,
                                           heartbeat_at)
                        VALUES (\(instance.nodeID), \(instance.bootID), \(instance.host), \(instance.machineBootID),
                                \(pid), \(instance.processStart), \(started), \(now))
                        ON CONFLICT (node_id) DO NOTHING
                        RETURNING 1
                        """, logger: logger))
            }
            guard recorded > 0 else { return nil }
            let jobsTakenBack = try await Self.count(
                connection.query(
                    """
                    UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = \(now),
                        requests = requests + 1
                    WHERE state = 'claimed' AND lease_owner <> \(instance.leaseOwner)
                      AND (lease_owner = \(instance.nodeID) OR substr(lease_owner, 1, length(\(prefix))) = \(prefix))
                    RETURNING 1
                    """, logger: logger))
            try await connection.query(
                """
                UPDATE webhook_outbox SET lease_owner = NULL, lease_expires_at = NULL
                WHERE lease_owner <> \(instance.leaseOwner)
                  AND (lease_owner = \(instance.nodeID) OR substr(lease_owner, 1, length(\(prefix))) = \(prefix))
                """, logger: logger)
            return jobsTakenBack
        }
    }

    // MARK: Webhook outbox

    public func claimWebhookEvents(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws
        -> [StoredWebhookEvent]
    {
        guard limit > 0 else { return [] }
        let now = Millis.from(now)
        let leaseEnd = now + Millis.from(leaseDuration)
        let limit = Int64(limit)
        let types = ClaimedWebhookRow.knownEventTypes
        return try await run("claiming webhook events", writes: true) { connection, logger in
            let rows = try await connection.query(
                """
                WITH claimed AS (
                    UPDATE webhook_outbox SET lease_owner = \(owner), lease_expires_at = \(leaseEnd)
                    WHERE id IN (SELECT id FROM webhook_outbox
                                 WHERE (lease_owner IS NULL OR lease_expires_at <= \(now)) AND given_up_at IS NULL
                                   AND event_type = ANY(\(types))
                                 ORDER BY id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                    RETURNING *)
                SELECT c.id, c.delivery_id, c.event_type, c.app_id, c.device_id, c.reason, c.occurred_at, c.attempts,
                       c.created_at, j.notification_id::text, j.receipt_outcome, j.receipt_reason,
                       j.receipt_delivered, j.receipt_failed, j.receipt_device_time, j.receipt_at
                FROM claimed c LEFT JOIN jobs j ON j.id = c.job_id ORDER BY c.id
                """, logger: logger)
            var events: [StoredWebhookEvent] = []
            for try await row in rows.decode(
                (Int64, String, String, String, String, String?, Int64?, Int, Int64, String?, String?, String?, Int?,
                 Int?, Int64?, Int64?).self)
            {
                let claimed = ClaimedWebhookRow(
                    id: row.0, deliveryID: row.1, eventType: row.2, appID: row.3, deviceID: row.4, reason: row.5,
                    occurredAt: row.6, attempts: row.7, createdAt: row.8, notificationID: row.9,
                    receiptOutcome: row.10, receiptReason: row.11, receiptDelivered: row.12, receiptFailed: row.13,
                    receiptDeviceTime: row.14, receiptAt: row.15)
                if let event = claimed.event { events.append(event) }
            }
            return events
        }
    }

    public func renewWebhookEvents(owner: String, leaseDuration: Duration, now: Date) async throws -> Int {
        let leaseEnd = Millis.from(now) + Millis.from(leaseDuration)
        return try await run("renewing webhook events' leases", writes: true) { connection, logger in
            try await Self.count(
                connection.query(
                    """
                    UPDATE webhook_outbox SET lease_expires_at = \(leaseEnd) WHERE lease_owner = \(owner) RETURNING 1
                    """, logger: logger))
        }
    }

    public func recordWebhookAttempts(id: Int64, owner: String, attempts: Int) async throws -> Bool {
        try await run("recording webhook event \(id)'s attempts", writes: true) { connection, logger in
            try await Self.count(
                connection.query(
                    """
                    UPDATE webhook_outbox SET attempts = \(attempts) WHERE id = \(id) AND lease_owner = \(owner) RETURNING 1
                    """, logger: logger)) > 0
        }
    }

    public func endWebhookEvent(id: Int64, owner: String) async throws -> Bool {
        try await run("ending webhook event \(id)", writes: true) { connection, logger in
            try await Self.count(
                connection.query(
                    "DELETE FROM webhook_outbox WHERE id = \(id) AND lease_owner = \(owner) RETURNING 1",
                    logger: logger)) > 0
        }
    }

    public func webhookOutboxDepth() async throws -> WebhookOutboxDepth {
        try await run("counting the webhook outbox") { connection, logger in
            let rows = try await connection.query(
                "SELECT COUNT(*) - COUNT(given_up_at), COUNT(given_up_at) FROM webhook_outbox", logger: logger)
            for try await (waiting, givenUp) in rows.decode((Int, Int).self) {
                return WebhookOutboxDepth(waiting: waiting, givenUp: givenUp)
            }
            return WebhookOutboxDepth(waiting: 0, givenUp: 0)
        }
    }

    public func giveUpWebhookEvent(id: Int64, owner: String, attempts: Int, failure: String, now: Date) async throws
        -> Bool
    {
        let now = Millis.from(now)
        let failure = GivenUpWebhookEvent.kept(failure)
        return try await run("giving up webhook event \(id)", writes: true) { connection, logger in
            try await Self.count(
                connection.query(
                    """
                    UPDATE webhook_outbox SET given_up_at = \(now), failure = \(failure), attempts = \(attempts),
                                              lease_owner = NULL, lease_expires_at = NULL
                    WHERE id = \(id) AND lease_owner = \(owner) RETURNING 1
                    """, logger: logger)) > 0
        }
    }

    public func givenUpWebhookEvents(appID: String?, limit: Int) async throws -> [GivenUpWebhookEvent] {
        let limit = Int64(max(1, min(limit, 10_000)))
        return try await run("listing given-up webhook events") { connection, logger in
            let rows = try await connection.query(
                """
                SELECT id, delivery_id, event_type, app_id, device_id, attempts, created_at, given_up_at, failure
                FROM webhook_outbox WHERE given_up_at IS NOT NULL AND (\(appID)::text IS NULL OR app_id = \(appID))
                ORDER BY given_up_at, id LIMIT \(limit)
                """, logger: logger)
            var events: [GivenUpWebhookEvent] = []
            for try await row in rows.decode((Int64, String, String, String, String, Int, Int64, Int64, String?).self) {
                events.append(
                    GivenUpWebhookEvent(
                        id: row.0, deliveryID: row.1, eventType: row.2, appID: row.3, deviceID: row.4, attempts: row.5,
                        createdAt: Millis.date(row.6), givenUpAt: Millis.date(row.7), failure: row.8 ?? ""))
            }
            return events
        }
    }

    public func redeliverWebhookEvents(appID: String?, ids: [Int64]?) async throws -> Int {
        if let ids, ids.isEmpty { return 0 }
        return try await run("sending given-up webhook events again", writes: true) { connection, logger in
            try await Self.count(
                connection.query(
                    """
                    UPDATE webhook_outbox SET given_up_at = NULL, failure = NULL, attempts = 0
                    WHERE given_up_at IS NOT NULL AND (\(appID)::text IS NULL OR app_id = \(appID))
                      AND (\(ids)::bigint[] IS NULL OR id = ANY(\(ids)))
                    RETURNING 1
                    """, logger: logger))
        }
    }

    public func releaseWebhookEvent(id: Int64, owner: String, attempts: Int) async throws -> Bool {
        try await run("releasing webhook event \(id)", writes: true) { connection, logger in
            try await Self.count(
                connection.query(
                    """
                    UPDATE webhook_outbox SET lease_owner = NULL, lease_expires_at = NULL, attempts = \(attempts)
                    WHERE id = \(id) AND lease_owner = \(owner) RETURNING 1
                    """, logger: logger)) > 0
        }
    }

    /// Writes new outbox events (`now`: each one's time), inside the caller's transaction, in one statement.
    private static func insertWebhookEvents(
        _ rows: [WebhookOutboxRow], now: [Int64], _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO webhook_outbox (delivery_id, event_type, app_id, device_id, reason, occurred_at, job_id,
                                        created_at)
            SELECT delivery_id, event_type, app_id, device_id, NULLIF(reason, ''), NULLIF(occurred_at, -1),
                   NULLIF(job_id, -1), created_at
            FROM unnest(\(rows.map(\.deliveryID))::text[], \(rows.map(\.eventType))::text[],
                        \(rows.map(\.appID))::text[], \(rows.map(\.deviceID))::text[],
                        \(rows.map { $0.reason ?? "" })::text[], \(rows.map { $0.occurredAt ?? -1 })::bigint[],
                        \(rows.map { $0.jobID ?? -1 })::bigint[], \(now)::bigint[])
                AS u(delivery_id, event_type, app_id, device_id, reason, occurred_at, job_id, created_at)
            """, logger: logger)
    }

    public func heartbeat(_ instance: NodeInstance, now: Date) async throws -> Bool {
        let now = Millis.from(now)
        return try await run("heartbeat of node '\(instance.nodeID)'", writes: true) { connection, logger in
            try await Self.count(
                connection.query(
                    """
                    UPDATE nodes SET heartbeat_at = \(now) WHERE node_id = \(instance.nodeID) AND boot_id = \(instance.bootID)
                    RETURNING 1
                    """, logger: logger)) > 0
        }
    }

    public func releaseNode(_ instance: NodeInstance) async throws {
        _ = try await run("releasing node '\(instance.nodeID)'", writes: true) { connection, logger in
            try await Self.count(
                connection.query(
                    "DELETE FROM nodes WHERE node_id = \(instance.nodeID) AND boot_id = \(instance.bootID) RETURNING 1",
                    logger: logger))
        }
    }

    public func leasedJobs(nodeID: String) async throws -> [LeasedJob] {
        let prefix = nodeID + "/"
        return try await run("reading the leases of node '\(nodeID)'") { connection, logger in
            let rows = try await connection.query(
                """
                SELECT id, notification_id, device_id, lease_owner, lease_expires_at FROM jobs
                WHERE state = 'claimed' AND (lease_owner = \(nodeID) OR substr(lease_owner, 1, length(\(prefix))) = \(prefix))
                ORDER BY id
                """, logger: logger)
            var jobs: [LeasedJob] = []
            for try await (id, notificationID, deviceID, owner, leaseExpiresAt) in rows.decode(
                (Int64, UUID, String, String, Int64).self)
            {
                jobs.append(
                    LeasedJob(
                        id: id, notificationID: notificationID, deviceID: deviceID, owner: owner,
                        leaseExpiresAt: Millis.date(leaseExpiresAt)))
            }
            return jobs
        }
    }

    // MARK: Helpers

    static let deviceColumns = """
        SELECT app_id, device_id, platform, push_token, environment, public_key, key_id, key_created_at, key_expires_at,
               registered_at, unregistered_at, user_id FROM devices
        """

    /// Runs `body` on a connection of the pool, within ``callDeadline``.
    /// - Parameters:
    ///   - what: What it does, for errors.
    ///   - writes: Whether `body` writes: its outcome is then recorded in ``writeHealth``.
    ///   - body: The statements.
    private func run<T: Sendable>(
        _ what: String, writes: Bool = false, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        let logger = self.logger
        let client = self.client
        do {
            let result = try await bounded(what, deadline: callDeadline, writes: writes) {
                try await client.withConnection { connection in try await body(connection, logger) }
            }
            if writes { writeHealth.recordSuccess() }
            return result
        } catch {
            if writes, let problem = Self.unwritable(error) { writeHealth.recordFailure(problem) }
            throw Self.wrap(error, what)
        }
    }

    private func transaction<T: Sendable>(
        _ what: String, deadline: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        let logger = self.logger
        let client = self.client
        do {
            let result = try await bounded(what, deadline: deadline ?? callDeadline, writes: true) {
                try await client.withTransaction(logger: logger) { connection in try await body(connection, logger) }
            }
            writeHealth.recordSuccess()
            return result
        } catch let error as PostgresTransactionError {
            if let problem = Self.unwritable(error) { writeHealth.recordFailure(problem) }
            if let closureError = error.closureError { throw Self.wrap(closureError, what) }
            throw Self.wrap(error, what)
        } catch {
            if let problem = Self.unwritable(error) { writeHealth.recordFailure(problem) }
            throw Self.wrap(error, what)
        }
    }

    /// Why a failed write says the server cannot take writes now, or nil when it failed for what was written (a
    /// constraint, a refusal of the store's own) or for a reason of the caller's.
    /// - Parameter error: What the write threw.
    /// - Returns: `SQLSTATE` and the server's message (no data: messages name statements and settings, and the
    ///   store's rows hold no plaintext), or the connection error's code.
    static func unwritable(_ error: any Error) -> String? {
        if let error = error as? PostgresTransactionError {
            let inner = error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError
            return inner.flatMap(unwritable)
        }
        guard let error = error as? PSQLError else { return nil }
        if let state = error.serverInfo?[.sqlState] {
            let serverSide = state == "25006" || ["08", "53", "57", "58", "XX"].contains { state.hasPrefix($0) }
            guard serverSide else { return nil }
            let message = error.serverInfo?[.message].map { " " + String($0.prefix(120)) } ?? ""
            return "SQLSTATE \(state)\(message)"
        }
        switch error.code {
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .sslUnsupported, .failedToAddSSLHandler:
            return "connection to PostgreSQL failed (\(error.code))"
        default:
            return nil
        }
    }

    /// Runs one call within `deadline`; returns on cancellation too (see ``AbandonableCall``).
    private func bounded<T: Sendable>(
        _ what: String, deadline: Duration, writes: Bool = false, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let logger = self.logger
        let writeHealth = self.writeHealth
        return try await AbandonableCall.run(
            deadline: deadline,
            timeoutError: {
                logger.warning("PostgreSQL call abandoned at its deadline", metadata: ["call": "\(what)"])
                if writes { writeHealth.recordFailure("no answer within \(deadline)") }
                return GatewayStoreError(.database, "PostgreSQL did not answer \(what) within \(deadline)")
            }, operation)
    }

    private static func wrap(_ error: any Error, _ what: String) -> any Error {
        if error is GatewayStoreError { return error }
        if let error = error as? PSQLError {
            let state = error.serverInfo?[.sqlState] ?? "-"
            let message = error.serverInfo?[.message] ?? "\(error.code)"
            return GatewayStoreError(.database, "PostgreSQL failed \(what): \(state) \(message)")
        }
        if let error = error as? PostgresTransactionError {
            let inner = error.beginError ?? error.commitError ?? error.rollbackError
            if let inner { return wrap(inner, what) }
        }
        return GatewayStoreError(.database, "PostgreSQL failed \(what): \(type(of: error))")
    }

    private static func requireApp(_ appID: String, _ connection: PostgresConnection, _ logger: Logger) async throws {
        let found = try await count(connection.query("SELECT 1 FROM apps WHERE id = \(appID)", logger: logger))
        guard found > 0 else {
            throw GatewayStoreError(.unknownApp, "no app '\(appID)' in this gateway", field: "appId")
        }
    }

    private static func endOpenJobs(
        appID: String, deviceID: String, reason: String, now: Int64, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE jobs SET state = 'unregistered', failure_reason = \(reason), lease_owner = NULL,
                lease_expires_at = NULL, updated_at = \(now)
            WHERE app_id = \(appID) AND device_id = \(deviceID) AND state IN ('queued', 'claimed')
            """, logger: logger)
    }

    private static func int(_ rows: PostgresRowSequence) async throws -> Int {
        for try await value in rows.decode(Int.self) { return value }
        return 0
    }

    private static func count(_ rows: PostgresRowSequence) async throws -> Int {
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    private static func apps(_ rows: PostgresRowSequence) async throws -> [GatewayApp] {
        var apps: [GatewayApp] = []
        for try await (id, topic, team, keyID, keyPath, identityPath, previous, projectID, serviceAccountPath, applicationID)
            in rows.decode((String, String, String, String, String, String, String, String?, String?, String?).self)
        {
            var fcm: FCMAppCredentials?
            if let projectID, let serviceAccountPath, let applicationID {
                fcm = FCMAppCredentials(
                    projectID: projectID, serviceAccountPath: serviceAccountPath, applicationID: applicationID)
            }
            apps.append(
                GatewayApp(
                    id: id, topic: topic, teamID: team, apnsKeyID: keyID, apnsKeyPath: keyPath,
                    serverIdentityPath: identityPath,
                    previousIdentityPaths: GatewayApp.previousIdentityPaths(column: previous), fcm: fcm))
        }
        return apps
    }

    private static func devices(_ rows: PostgresRowSequence) async throws -> [StoredDevice] {
        var devices: [StoredDevice] = []
        for try await row in rows { devices.append(try device(row)) }
        return devices
    }

    /// A device from a row of ``deviceColumns``.
    static func device(_ row: PostgresRow) throws -> StoredDevice {
        let (appID, deviceID, platform, token, environment, publicKey, keyID, keyCreated, keyExpires, registered,
            unregistered, userID) = try row.decode(
                (String, String, String, String, String, String, String, Int64, Int64?, Int64, Int64?, String?).self)
        let address = PushAddress(token: token, platform: platform, environment: environment)
        return StoredDevice(
            appID: appID, deviceID: deviceID, address: address,
            registration: DeviceRegistration(
                publicKey: publicKey, keyId: keyID, createdAt: Millis.date(keyCreated),
                expiresAt: keyExpires.map(Millis.date)
            ).on(address),
            registeredAt: Millis.date(registered), unregisteredAt: unregistered.map(Millis.date), userID: userID)
    }
}
