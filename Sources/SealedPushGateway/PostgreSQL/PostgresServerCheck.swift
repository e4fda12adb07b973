import Logging
import PostgresNIO

/// One direct connection to a PostgreSQL server (no pool), opened and closed to learn whether the gateway can use
/// it — and if not, why: refused, unreachable, a login or database the server rejects.
struct PostgresServerCheck: Sendable {
    let host: String
    let port: Int
    let username: String
    let password: String?
    let database: String?

    /// `host:port`, for messages.
    var address: String { "\(host):\(port)" }

    /// Connects (TLS off, as the store's URL form), then closes.
    /// - Throws: ``GatewayStoreError`` `database` naming the server, the database, the user and the cause.
    func connect(logger: Logger) async throws {
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try? await connection.close()
        } catch {
            throw GatewayStoreError(
                .database,
                "cannot connect to PostgreSQL at \(address) (database \(database ?? username), user \(username)): "
                    + Self.cause(error))
        }
    }

    /// What the server said, or what stood between it and the gateway.
    static func cause(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return "\(underlying)" }
        return "\(error.code)"
    }
}
