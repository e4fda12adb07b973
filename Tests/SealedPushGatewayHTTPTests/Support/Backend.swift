import SealedPushGatewayTestSupport
import Testing

/// The database a test runs on. PostgreSQL only when `SEALEDPUSH_TEST_POSTGRES_URL` is set.
enum Backend: String, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    static var available: [Backend] { PostgresTestDatabase.serverURL == nil ? [.sqlite] : [.sqlite, .postgres] }
    var testDescription: String { rawValue }
}
