import Foundation
import Logging
import SealedPushAPNs
import SealedPushCore
import SealedPushServer

/// One `APNsClient` per app and environment, built on first use from the app record (its `.p8` key file, key id
/// and team).
///
/// A client is rebuilt when the app's key path, key id or team changes; the old one is kept (its sends may still
/// be running) and shut down with the others when the service stops.
actor APNsClientRegistry {
    private struct ClientKey: Hashable {
        var appID: String
        var environment: APNsEnvironment
    }

    private struct Entry {
        /// What the client was built from.
        var keyPath: String
        var keyID: String
        var teamID: String
        var client: APNsClient
    }

    private let configuration: DeliveryConfiguration
    private let logger: Logger
    private var clients: [ClientKey: Entry] = [:]
    private var retired: [APNsClient] = []
    private var closed = false

    init(configuration: DeliveryConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The client for an app's tokens of one environment, built if needed.
    /// - Throws: `SealedPushError` when the key file cannot be read or the configuration is invalid, or when the
    ///   registry was shut down.
    func client(for app: GatewayApp, environment: APNsEnvironment) throws -> APNsClient {
        guard !closed else { throw SealedPushError(.invalidArgument, "the delivery service is shutting down") }
        let key = ClientKey(appID: app.id, environment: environment)
        if let entry = clients[key] {
            if entry.keyPath == app.apnsKeyPath, entry.keyID == app.apnsKeyID, entry.teamID == app.teamID {
                return entry.client
            }
            retired.append(entry.client)
            clients[key] = nil
        }
        let signingKey = try APNsSigningKey(contentsOfFile: app.apnsKeyPath)
        let issuer = try ProviderTokenIssuer(key: signingKey, keyID: app.apnsKeyID, teamID: app.teamID)
        var clientConfiguration = configuration.client
        clientConfiguration.endpoint = configuration.endpoint(for: environment)
        var clientLogger = logger
        clientLogger[metadataKey: "app"] = "\(app.id)"
        clientLogger[metadataKey: "environment"] = "\(environment.rawValue)"
        let client = try APNsClient(configuration: clientConfiguration, tokenIssuer: issuer, logger: clientLogger)
        clients[key] = Entry(keyPath: app.apnsKeyPath, keyID: app.apnsKeyID, teamID: app.teamID, client: client)
        logger.info(
            "APNs client created",
            metadata: [
                "app": "\(app.id)", "environment": "\(environment.rawValue)",
                "endpoint": "\(clientConfiguration.endpoint)",
            ])
        return client
    }

    /// Shuts every client down (sends still running end with `ClientShutdown`); no client is built afterwards.
    func shutdown() async {
        closed = true
        let all = clients.values.map(\.client) + retired
        clients = [:]
        retired = []
        for client in all { await client.shutdown() }
    }
}
