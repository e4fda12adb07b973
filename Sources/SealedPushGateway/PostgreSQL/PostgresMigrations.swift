/// The PostgreSQL schema, one migration per version. Never edit a released migration: add the next one.
enum PostgresMigrations {
    /// The `pg_advisory_xact_lock` key that serializes migrating nodes.
    static let lockKey: Int64 = 0x5350_4757_4D49_4752  // "SPGWMIGR"

    static let all: [Migration] = [
        Migration(
            version: 1, name: "apps, api keys, devices, notifications, jobs",
            statements: [
                """
                CREATE TABLE apps (
                    id TEXT PRIMARY KEY, topic TEXT NOT NULL, team_id TEXT NOT NULL, apns_key_id TEXT NOT NULL,
                    apns_key_path TEXT NOT NULL, server_identity_path TEXT NOT NULL,
                    created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY, app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                    digest BYTEA NOT NULL CHECK (length(digest) = 32), label TEXT NOT NULL,
                    created_at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE devices (
                    app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE, device_id TEXT NOT NULL,
                    apns_token TEXT NOT NULL, environment TEXT NOT NULL CHECK (environment IN ('production', 'sandbox')),
                    public_key TEXT NOT NULL, key_id TEXT NOT NULL, key_created_at BIGINT NOT NULL,
                    key_expires_at BIGINT, registered_at BIGINT NOT NULL, unregistered_at BIGINT,
                    PRIMARY KEY (app_id, device_id))
                """,
                """
                CREATE TABLE notifications (
                    id UUID PRIMARY KEY, app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                    idempotency_key TEXT, priority INTEGER NOT NULL, collapse_id TEXT,
                    created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
                    UNIQUE (app_id, idempotency_key))
                """,
                """
                CREATE TABLE jobs (
                    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    notification_id UUID NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
                    app_id TEXT NOT NULL, device_id TEXT NOT NULL, sealed_body BYTEA NOT NULL,
                    state TEXT NOT NULL
                        CHECK (state IN ('queued', 'claimed', 'sent', 'failed', 'expired', 'unregistered')),
                    not_before BIGINT NOT NULL, lease_owner TEXT, lease_expires_at BIGINT,
                    attempts INTEGER NOT NULL DEFAULT 0, apns_token TEXT, apns_id TEXT, failure_reason TEXT,
                    updated_at BIGINT NOT NULL,
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
            statements: [
                "ALTER TABLE jobs DROP CONSTRAINT jobs_state_check",
                """
                ALTER TABLE jobs ADD CONSTRAINT jobs_state_check
                    CHECK (state IN ('queued', 'claimed', 'sent', 'failed', 'expired', 'unregistered', 'withdrawn'))
                """,
            ] + PortableMigrations.jobReceiptColumns.map { "ALTER TABLE jobs ADD COLUMN \($0.name) \($0.type)" }
                + PortableMigrations.lifecycleAndReceipts),
        PortableMigrations.apiKeyExpiryAndLastUse,
        PortableMigrations.previousIdentities,
        PortableMigrations.jobsDueByApp,
        // A foreign key costs a trigger per inserted row (a lookup and a KEY SHARE lock of the parent): a quarter of
        // a fan-out's INSERT (17 of 69 ms per 1,000 jobs, EXPLAIN ANALYZE). Jobs and their message ids are written
        // only with their notification, in its transaction, and the store deletes them with it (purge, app removal).
        Migration(
            version: 11, name: "jobs and job message ids without per-row foreign key checks",
            statements: [
                "ALTER TABLE job_messages DROP CONSTRAINT job_messages_job_id_fkey",
                "ALTER TABLE jobs DROP CONSTRAINT jobs_notification_id_fkey",
            ]),
        // Every claim and finish leaves a dead row version in `jobs` and its indexes. Autovacuum's defaults wait for
        // a fifth of the table to be dead (200,000 rows of a million kept for retention); a queue table is vacuumed
        // after 1 % plus 1,000, and its statistics kept within 2 %, without the gateway vacuuming on its own path.
        Migration(
            version: 12, name: "jobs: autovacuum thresholds of a queue table",
            statements: [
                """
                ALTER TABLE jobs SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
                    autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02)
                """
            ]),
        // `jobs_device` serves only a device's open jobs (when it is unregistered or removed). Keeping only those, a
        // finish no longer adds an entry for the job's new row version (a claim's and a finish's updates are not
        // heap-only: `jobs_app_due` holds the state), and the index stays the size of the queue.
        Migration(
            version: 13, name: "jobs by device: only open jobs",
            statements: [
                "DROP INDEX jobs_device",
                "CREATE INDEX jobs_device ON jobs (app_id, device_id) WHERE state IN ('queued', 'claimed')",
            ]),
        // A job's lease is held only while it is claimed: every statement that ends or gives back a claim clears the
        // lease with it. Stated in the schema, so that a job end can find its job by id and lease owner alone
        // (``PostgresFinishJobs``) — with `state = 'claimed'` in its condition, PostgreSQL could plan it as a walk of
        // every claimed entry of `jobs_app_due`, live and dead, whenever its statistics said few were claimed. A
        // lease left on an ended job (there should be none) is cleared first; validating reads the table once.
        Migration(
            version: 14, name: "jobs: a lease only on a claimed job",
            statements: [
                """
                UPDATE jobs SET lease_owner = NULL, lease_expires_at = NULL
                WHERE lease_owner IS NOT NULL AND state <> 'claimed'
                """,
                """
                ALTER TABLE jobs ADD CONSTRAINT jobs_lease_only_claimed
                    CHECK (lease_owner IS NULL OR state = 'claimed') NOT VALID
                """,
                "ALTER TABLE jobs VALIDATE CONSTRAINT jobs_lease_only_claimed",
            ]),
        PortableMigrations.notificationKinds(version: 15),
        PortableMigrations.lowercaseKeyIDsAndSkippedDevices(version: 16),
        PortableMigrations.webhookOutbox(version: 17, idColumn: "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"),
        PortableMigrations.webhookGivenUp(version: 18),
    ]
}
