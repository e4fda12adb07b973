/// Migrations whose SQL is the same on SQLite and PostgreSQL, listed by both stores' migration lists.
enum PortableMigrations {
    /// Version 2: notifications by expiry (the expiry sweep and the retention purge).
    static let notificationsByExpiry = Migration(
        version: 2, name: "notifications by expiry (expiry sweeps, retention purge)",
        statements: ["CREATE INDEX notifications_expiry ON notifications (expires_at)"])

    /// Version 3: devices belong to users (a send may name users).
    static let deviceUsers = Migration(
        version: 3, name: "devices belong to users (a send may name users)",
        statements: [
            "ALTER TABLE devices ADD COLUMN user_id TEXT",
            "CREATE INDEX devices_user ON devices (app_id, user_id)",
        ])

    /// Version 4 (delivery, issue 17):
    /// - `nodes`: the running incarnation of each node id (boot id, process, heartbeat), so a restart takes back
    ///   its predecessor's leases at once and two live processes never share a node id.
    /// - `jobs.requests`, `jobs.transient_reason`: APNs requests made for the job (the client's own retries
    ///   included) and the last transient failure's reason.
    /// - One registered device per APNs token in an app and environment: of devices sharing a token, all but the
    ///   latest registered are marked unregistered (their open jobs end `TokenMovedToAnotherDevice`), and a
    ///   unique index keeps it so.
    static let deliveryNodesRequestsAndTokens = Migration(
        version: 4, name: "delivery: node instances, request counts and transient reasons, one device per token",
        statements: [
            """
            CREATE TABLE nodes (
                node_id TEXT PRIMARY KEY, boot_id TEXT NOT NULL, host TEXT NOT NULL, machine_boot_id TEXT NOT NULL,
                pid BIGINT NOT NULL, process_start BIGINT NOT NULL, started_at BIGINT NOT NULL,
                heartbeat_at BIGINT NOT NULL)
            """,
            "ALTER TABLE jobs ADD COLUMN requests INTEGER NOT NULL DEFAULT 0",
            "UPDATE jobs SET requests = attempts",
            "ALTER TABLE jobs ADD COLUMN transient_reason TEXT",
            """
            UPDATE devices SET unregistered_at = (
                SELECT MAX(newer.registered_at) FROM devices newer
                WHERE newer.app_id = devices.app_id AND newer.environment = devices.environment
                  AND newer.apns_token = devices.apns_token AND newer.unregistered_at IS NULL
                  AND (newer.registered_at > devices.registered_at
                       OR (newer.registered_at = devices.registered_at AND newer.device_id > devices.device_id)))
            WHERE unregistered_at IS NULL AND EXISTS (
                SELECT 1 FROM devices newer
                WHERE newer.app_id = devices.app_id AND newer.environment = devices.environment
                  AND newer.apns_token = devices.apns_token AND newer.unregistered_at IS NULL
                  AND (newer.registered_at > devices.registered_at
                       OR (newer.registered_at = devices.registered_at AND newer.device_id > devices.device_id)))
            """,
            """
            UPDATE jobs SET state = 'unregistered', failure_reason = 'TokenMovedToAnotherDevice', lease_owner = NULL,
                lease_expires_at = NULL
            WHERE state IN ('queued', 'claimed') AND EXISTS (
                SELECT 1 FROM devices d
                WHERE d.app_id = jobs.app_id AND d.device_id = jobs.device_id AND d.unregistered_at IS NOT NULL)
            """,
            """
            CREATE UNIQUE INDEX devices_registered_token ON devices (app_id, environment, apns_token)
            WHERE unregistered_at IS NULL
            """,
        ])

    /// Version 5: the SHA-256 of the request that used an idempotency key (hex), so a reuse with another body is
    /// refused. Rows from before it have none (their key replays whatever the body).
    static let idempotencyRequestDigest = Migration(
        version: 5, name: "idempotency request digest",
        statements: ["ALTER TABLE notifications ADD COLUMN request_digest TEXT"])

    /// Version 6 (issue 18, FCM): devices on two platforms.
    /// - `devices.platform` (`apns` for every existing row, or `fcm`); `devices.apns_token` becomes `push_token`
    ///   (the APNs token, or the FCM registration token), and so does the token recorded on each job. An FCM
    ///   device's `environment` is `production`.
    /// - The one-device-per-token index covers the platform.
    /// - `apps.fcm_*`: an app's FCM project, service-account file path and Android application id (all null for
    ///   an iOS-only app).
    static let fcmDevicesAndApps = Migration(
        version: 6, name: "FCM: device platform and push token, app FCM credentials",
        statements: [
            "ALTER TABLE devices ADD COLUMN platform TEXT NOT NULL DEFAULT 'apns' CHECK (platform IN ('apns', 'fcm'))",
            "ALTER TABLE devices RENAME COLUMN apns_token TO push_token",
            "ALTER TABLE jobs RENAME COLUMN apns_token TO push_token",
            "DROP INDEX devices_registered_token",
            """
            CREATE UNIQUE INDEX devices_registered_token ON devices (app_id, platform, environment, push_token)
            WHERE unregistered_at IS NULL
            """,
            "ALTER TABLE apps ADD COLUMN fcm_project_id TEXT",
            "ALTER TABLE apps ADD COLUMN fcm_service_account_path TEXT",
            "ALTER TABLE apps ADD COLUMN fcm_application_id TEXT",
        ])

    /// Version 7 (issue 20, lifecycle and receipts), the statements both stores share; each store first lets
    /// `jobs.state` take `withdrawn` and adds the jobs' receipt columns (SQLite rebuilds the table for its CHECK).
    /// - `notifications.withdrawn_at`: when the sender withdrew it.
    /// - `job_messages`: each job's envelope message id and the device key it was sealed to, so a receipt finds its
    ///   job. A table of its own, written once at enqueue: as an index on `jobs` the message id was rewritten by
    ///   every claim and finish (neither can be a heap-only update), and PostgreSQL's delivery fell from 0.42× to
    ///   0.17× of the bare client.
    /// - `devices_key`: a receipt finds its device by the key id that sealed it.
    /// - `receipts`: the ids of receipts opened, until their expiry (a receipt opens once).
    static let lifecycleAndReceipts: [String] = [
        "ALTER TABLE notifications ADD COLUMN withdrawn_at BIGINT",
        """
        CREATE TABLE job_messages (
            job_id BIGINT PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE, app_id TEXT NOT NULL,
            message_id TEXT NOT NULL, key_id TEXT NOT NULL)
        """,
        "CREATE UNIQUE INDEX job_messages_message ON job_messages (app_id, message_id)",
        "CREATE INDEX devices_key ON devices (app_id, key_id)",
        """
        CREATE TABLE receipts (
            app_id TEXT NOT NULL, receipt_id TEXT NOT NULL, expires_at BIGINT NOT NULL,
            PRIMARY KEY (app_id, receipt_id))
        """,
        "CREATE INDEX receipts_expiry ON receipts (expires_at)",
    ]

    /// The job columns version 7 adds (both stores): the first receipt's fields.
    static let jobReceiptColumns: [(name: String, type: String)] = [
        ("receipt_outcome", "TEXT"), ("receipt_reason", "TEXT"), ("receipt_delivered", "INTEGER"),
        ("receipt_failed", "INTEGER"), ("receipt_device_time", "BIGINT"), ("receipt_at", "BIGINT"),
        ("receipt_count", "INTEGER NOT NULL DEFAULT 0"),
    ]

    /// Version 8 (issue 17 §11, the operator's keys): an API key's optional expiry and when it was last used.
    static let apiKeyExpiryAndLastUse = Migration(
        version: 8, name: "API keys: expiry and last use",
        statements: [
            "ALTER TABLE api_keys ADD COLUMN expires_at BIGINT",
            "ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT",
        ])

    /// Version 9 (issue 17 §11, identity rotation): the server identities an app rotated out of sealing, whose
    /// receipts the gateway still opens until the operator retires them (a JSON array of file paths).
    static let previousIdentities = Migration(
        version: 9, name: "apps: previous server identities",
        statements: ["ALTER TABLE apps ADD COLUMN previous_identity_paths TEXT NOT NULL DEFAULT '[]'"])

    /// Version 10 (issue 17 §12, fairness between apps): claims walk each app's due jobs, so the walk's index leads
    /// with the app (`jobs_app_due`) and replaces `jobs_due` (same number of indexes to keep up on every change).
    static let jobsDueByApp = Migration(
        version: 10, name: "jobs due by app (fair claims between apps)",
        statements: [
            "CREATE INDEX jobs_app_due ON jobs (state, app_id, not_before)",
            "DROP INDEX jobs_due",
        ])

    /// What each notification is (`notifications.kind`): null for content (and every row from before it), `remove`,
    /// `badge`, or `update <id>` naming the content notification it updates — so an update refuses an id with no
    /// content to replace, or one whose notification was withdrawn (SQLite's version 14, PostgreSQL's 15).
    static func notificationKinds(version: Int) -> Migration {
        Migration(
            version: version, name: "notifications: kind (content, update of which, remove, badge)",
            statements: ["ALTER TABLE notifications ADD COLUMN kind TEXT"])
    }

    /// Device key ids in their text form, and the devices a send left out kept with it (SQLite's version 15,
    /// PostgreSQL's 16):
    /// - Key ids lower-cased (`devices.key_id`, and `job_messages.key_id` should any be upper-case: the gateway
    ///   always wrote those in lowercase). Gateways before registration refused an upper-case `keyId` stored it as
    ///   sent, and a receipt finds its device by the key id it was sealed with, in lowercase hex, as exact text: a
    ///   receipt from such a device was refused until it registered again. No unique constraint holds a key id
    ///   (`devices` is keyed by device id and token, `job_messages` by job and by message id, `receipts` by receipt
    ///   id), so lower-casing cannot collide with another row and every row is kept as it was otherwise. Two devices
    ///   of an app whose key ids become equal held the same key before, in two spellings (a registration's key id
    ///   is that of its public key), as two devices may in one; a receipt sealed by that key finds its job by its
    ///   message id, whichever of them it was sent to. Only the rows to change are written; the store writes key ids
    ///   in lowercase since (``GatewayStore/putDevice(appID:deviceID:address:registration:userID:now:)``).
    /// - `notifications.skipped_devices`: the devices a send reached only through their users and left out (they
    ///   could not be sealed to), so a replay of its idempotency key and its status list them as its `202` did;
    ///   null when none was (``SkippedDevice/storedText(_:)``).
    static func lowercaseKeyIDsAndSkippedDevices(version: Int) -> Migration {
        Migration(
            version: version, name: "device key ids in lowercase; the devices a send left out",
            statements: [
                "UPDATE devices SET key_id = lower(key_id) WHERE key_id <> lower(key_id)",
                "UPDATE job_messages SET key_id = lower(key_id) WHERE key_id <> lower(key_id)",
                "ALTER TABLE notifications ADD COLUMN skipped_devices TEXT",
            ])
    }

    /// The webhook's outbox (SQLite's version 16, PostgreSQL's 17): an event for the backend's webhook is written in
    /// the transaction that makes it true — the job's end that marks a device unregistered, a job's first receipt —
    /// and deleted once the receiver took it or it was given up, so that neither a crash, a restart nor a receiver
    /// down for longer than the node's memory could hold loses one. A node posting an event holds a lease on its row
    /// (`lease_owner`, `lease_expires_at`, renewed while it posts); the row of a node that died is taken by another
    /// (or by the node's next incarnation at once) when the lease ends. `delivery_id` is the `SealedPush-Delivery`
    /// header, the same on every attempt; `attempts` those made by earlier holders.
    ///
    /// A row holds ids and what the event adds to them, never its JSON: an unregistered device's `reason` and
    /// `occurred_at`; a receipt's `job_id`, whose receipt fields (the ones the status shows) the event is read from
    /// when posted — the receipt's outcome is stored once, where the contract names it. Purging a notification
    /// purges the receipt events of its jobs.
    /// - Parameters:
    ///   - version: The store's version number for it.
    ///   - idColumn: The store's declaration of an ever-increasing integer primary key named `id`.
    static func webhookOutbox(version: Int, idColumn: String) -> Migration {
        Migration(
            version: version, name: "webhook outbox: events written with what they report",
            statements: [
                """
                CREATE TABLE webhook_outbox (
                    \(idColumn),
                    delivery_id TEXT NOT NULL UNIQUE, event_type TEXT NOT NULL,
                    app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE, device_id TEXT NOT NULL,
                    reason TEXT, occurred_at BIGINT, job_id BIGINT REFERENCES jobs(id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
                    lease_owner TEXT, lease_expires_at BIGINT,
                    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL)))
                """,
                "CREATE INDEX webhook_outbox_job ON webhook_outbox (job_id)",
            ])
    }

    /// Given-up webhook events are kept (SQLite's version 17, PostgreSQL's 18): an event whose attempts were spent, or
    /// that the receiver refused, was deleted — after a receiver down for longer than the retries last (5 to 10
    /// minutes by default) its events were gone. Now its row stays with `given_up_at` and the last `failure` (an HTTP
    /// status or a connection error, never the event's body), claims skip it, the operator lists it and sends it
    /// again (`sealed-push-gateway webhook list|redeliver`), and the retention purge deletes it once it was given up
    /// longer than `delivery.retentionSeconds` ago.
    static func webhookGivenUp(version: Int) -> Migration {
        Migration(
            version: version, name: "webhook outbox: given-up events kept for redelivery",
            statements: [
                "ALTER TABLE webhook_outbox ADD COLUMN given_up_at BIGINT",
                "ALTER TABLE webhook_outbox ADD COLUMN failure TEXT",
            ])
    }
}
