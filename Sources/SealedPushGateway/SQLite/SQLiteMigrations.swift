/// The SQLite schema, one migration per version. Never edit a released migration: add the next one.
enum SQLiteMigrations {
    static let all: [Migration] = [
        Migration(
            version: 1, name: "apps, api keys, devices, notifications, jobs",
            statements: [
                """
                CREATE TABLE apps (
                    id TEXT PRIMARY KEY, topic TEXT NOT NULL, team_id TEXT NOT NULL, apns_key_id TEXT NOT NULL,
                    apns_key_path TEXT NOT NULL, server_identity_path TEXT NOT NULL,
                    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)
                """,
                """
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY, app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                    digest BLOB NOT NULL CHECK (length(digest) = 32), label TEXT NOT NULL,
                    created_at INTEGER NOT NULL)
                """,
                """
                CREATE TABLE devices (
                    app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE, device_id TEXT NOT NULL,
                    apns_token TEXT NOT NULL, environment TEXT NOT NULL CHECK (environment IN ('production', 'sandbox')),
                    public_key TEXT NOT NULL, key_id TEXT NOT NULL, key_created_at INTEGER NOT NULL,
                    key_expires_at INTEGER, registered_at INTEGER NOT NULL, unregistered_at INTEGER,
                    PRIMARY KEY (app_id, device_id))
                """,
                """
                CREATE TABLE notifications (
                    id TEXT PRIMARY KEY, app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                    idempotency_key TEXT, priority INTEGER NOT NULL, collapse_id TEXT,
                    created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
                    UNIQUE (app_id, idempotency_key))
                """,
                """
                CREATE TABLE jobs (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    notification_id TEXT NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
                    app_id TEXT NOT NULL, device_id TEXT NOT NULL, sealed_body BLOB NOT NULL,
                    state TEXT NOT NULL
                        CHECK (state IN ('queued', 'claimed', 'sent', 'failed', 'expired', 'unregistered')),
                    not_before INTEGER NOT NULL, lease_owner TEXT, lease_expires_at INTEGER,
                    attempts INTEGER NOT NULL DEFAULT 0, apns_token TEXT, apns_id TEXT, failure_reason TEXT,
                    updated_at INTEGER NOT NULL,
                    UNIQUE (notification_id, device_id))
                """,
                "CREATE INDEX jobs_due ON jobs (state, not_before)",
                "CREATE INDEX jobs_device ON jobs (app_id, device_id, state)",
            ]),
        PortableMigrations.notificationsByExpiry,
        PortableMigrations.deviceUsers,
        PortableMigrations.deliveryNodesRequestsAndTokens,
        PortableMigrations.idempotencyRequestDigest,
        PortableMigrations.fcmDevicesAndApps,
        Migration(
            version: 7, name: "lifecycle and receipts: withdrawn jobs, message and key ids, receipts",
            statements: rebuildJobsForLifecycle + PortableMigrations.lifecycleAndReceipts),
        PortableMigrations.apiKeyExpiryAndLastUse,
        PortableMigrations.previousIdentities,
        PortableMigrations.jobsDueByApp,
        // SQLite rewrites only the indexes whose columns an UPDATE changes. With `state` in `jobs_device`, every
        // claim and finish moved each job's entry in it too — and a fan-out's jobs belong to as many devices, so a
        // claim of 16 dirtied up to 16 of its leaf pages (each written to the WAL whole). Without `state`, claims
        // and finishes leave it alone; the one query that used `state` there (a device's open jobs, when it is
        // unregistered or removed) reads that device's jobs and filters them.
        Migration(
            version: 11, name: "jobs by device without their state (claims and finishes no longer rewrite it)",
            statements: [
                "DROP INDEX jobs_device",
                "CREATE INDEX jobs_device ON jobs (app_id, device_id)",
            ]),
        // A one-device send wrote about four random leaves: its device's in `jobs_device`, its message id's in
        // `job_messages_message`, and a second index of `job_messages` (a `BIGINT PRIMARY KEY` is not SQLite's row
        // id). `jobs_device` serves only a device's open jobs (when it is unregistered or removed), so it keeps only
        // those: a few hundred entries on a few pages that a group commit's sends share, instead of one leaf per
        // device in an index of every job ever kept. `job_messages` is keyed by its row id, the job's id.
        // Measured (`SQLiteWriteVolumeTests`): a group commit of 16 sends, 64–65 → 36–38 pages; a
        // fan-out's claim and finish of 16 jobs, 7/10 → 19/22 (they now move entries of the open jobs' index).
        Migration(
            version: 12, name: "jobs by device: only open jobs; job message ids keyed by the job's row id",
            statements: [
                "DROP INDEX jobs_device",
                "CREATE INDEX jobs_device ON jobs (app_id, device_id) WHERE state IN ('queued', 'claimed')",
                """
                CREATE TABLE job_messages_new (
                    job_id INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE, app_id TEXT NOT NULL,
                    message_id TEXT NOT NULL, key_id TEXT NOT NULL)
                """,
                "INSERT INTO job_messages_new (job_id, app_id, message_id, key_id) SELECT job_id, app_id, message_id, key_id FROM job_messages",
                "DROP TABLE job_messages",
                "ALTER TABLE job_messages_new RENAME TO job_messages",
                "CREATE UNIQUE INDEX job_messages_message ON job_messages (app_id, message_id)",
            ]),
        // `jobs_app_due` is what claims walk: `queued` jobs by app and due time, and `claimed` ones. It held every job
        // kept (100,000 kept jobs: 435 pages of it), and each finish moved the job's entry into the ended states'
        // part. Now a finish removes the entry and the index stays the size of the queue (1 page). A statement that
        // walks it states its condition: SQLite reads a partial index only for a `WHERE` that implies the index's.
        // (PostgreSQL keeps the whole index: alternated under `scripts/gateway-load.sh`, the partial one was not
        // faster there — BENCHMARKS.md, stop 38.)
        Migration(
            version: 13, name: "jobs due by app: only open jobs",
            statements: [
                "DROP INDEX jobs_app_due",
                "CREATE INDEX jobs_app_due ON jobs (state, app_id, not_before) WHERE state IN ('queued', 'claimed')",
            ]),
        PortableMigrations.notificationKinds(version: 14),
        PortableMigrations.lowercaseKeyIDsAndSkippedDevices(version: 15),
        PortableMigrations.webhookOutbox(version: 16, idColumn: "id INTEGER PRIMARY KEY AUTOINCREMENT"),
        PortableMigrations.webhookGivenUp(version: 17),
    ]

    /// SQLite cannot change a CHECK constraint: the jobs table is rebuilt (the documented twelve-step way) with
    /// `withdrawn` allowed and the receipt columns, keeping ids and the AUTOINCREMENT sequence.
    static let rebuildJobsForLifecycle: [String] = {
        let kept = """
            id, notification_id, app_id, device_id, sealed_body, state, not_before, lease_owner, lease_expires_at,
            attempts, push_token, apns_id, failure_reason, updated_at, requests, transient_reason
            """
        let added = PortableMigrations.jobReceiptColumns.map { "\($0.name) \($0.type)" }.joined(separator: ", ")
        return [
            """
            CREATE TABLE jobs_new (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                notification_id TEXT NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
                app_id TEXT NOT NULL, device_id TEXT NOT NULL, sealed_body BLOB NOT NULL,
                state TEXT NOT NULL
                    CHECK (state IN ('queued', 'claimed', 'sent', 'failed', 'expired', 'unregistered', 'withdrawn')),
                not_before INTEGER NOT NULL, lease_owner TEXT, lease_expires_at INTEGER,
                attempts INTEGER NOT NULL DEFAULT 0, push_token TEXT, apns_id TEXT, failure_reason TEXT,
                updated_at INTEGER NOT NULL, requests INTEGER NOT NULL DEFAULT 0, transient_reason TEXT,
                \(added),
                UNIQUE (notification_id, device_id))
            """,
            "INSERT INTO jobs_new (\(kept)) SELECT \(kept) FROM jobs",
            // Ids are never reused: the new table's sequence starts where the old one's stood.
            """
            INSERT INTO sqlite_sequence (name, seq)
            SELECT 'jobs_new', seq FROM sqlite_sequence WHERE name = 'jobs'
              AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'jobs_new')
            """,
            """
            UPDATE sqlite_sequence SET seq = MAX(seq, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0))
            WHERE name = 'jobs_new'
            """,
            "DROP TABLE jobs",
            "ALTER TABLE jobs_new RENAME TO jobs",
            "CREATE INDEX jobs_due ON jobs (state, not_before)",
            "CREATE INDEX jobs_device ON jobs (app_id, device_id, state)",
        ]
    }()
}
