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
}
