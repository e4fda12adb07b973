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

    /// Version 4: the SHA-256 of the request that used an idempotency key (hex), so a reuse with another body is
    /// refused. Rows from before it have none (their key replays whatever the body).
    static let idempotencyRequestDigest = Migration(
        version: 4, name: "idempotency request digest",
        statements: ["ALTER TABLE notifications ADD COLUMN request_digest TEXT"])
}
