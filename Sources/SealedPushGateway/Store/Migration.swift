/// One step of a store's schema: applied once, in order, and recorded in `schema_version`.
struct Migration: Sendable {
    /// The version this step brings the schema to (1, 2, …).
    let version: Int
    /// What it does, for `schema_version` and operators.
    let name: String
    /// The SQL statements, run in one transaction with the record of the version.
    let statements: [String]
}
