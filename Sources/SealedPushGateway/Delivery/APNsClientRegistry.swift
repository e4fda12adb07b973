import Foundation
import Logging
import SealedPushAPNs
import SealedPushCore
import SealedPushServer

extension APNsClient: ShutdownableProviderClient {}

/// One `APNsClient` per app and environment, built on first use from the app record (its `.p8` key file, key id
/// and team), and rebuilt when any of those change (``ProviderClientCache``).
struct APNsClientRegistry: Sendable {
    private struct ClientKey: Hashable, Sendable {
        var appID: String
        var environment: APNsEnvironment
    }

    /// What a client is built from.
    private struct Source: Equatable, Sendable {
        var keyPath: String
        var keyID: String
        var teamID: String
    }

    private let configuration: DeliveryConfiguration
    private let logger: Logger
    private let cache = ProviderClientCache<ClientKey, Source, APNsClient>()

    init(configuration: DeliveryConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The client for an app's tokens of one environment, built if needed.
    /// - Throws: `SealedPushError` when the key file cannot be read or the configuration is invalid, or when the
    ///   registry was shut down.
    func client(for app: GatewayApp, environment: APNsEnvironment) async throws -> APNsClient {
        let source = Source(keyPath: app.apnsKeyPath, keyID: app.apnsKeyID, teamID: app.teamID)
        let (configuration, logger) = (configuration, logger)
        return try await cache.client(for: ClientKey(appID: app.id, environment: environment), builtFrom: source) {
            let signingKey = try APNsSigningKey(contentsOfFile: source.keyPath)
            let issuer = try ProviderTokenIssuer(key: signingKey, keyID: source.keyID, teamID: source.teamID)
            var clientConfiguration = configuration.client
            clientConfiguration.endpoint = configuration.endpoint(for: environment)
            clientConfiguration.proxy = configuration.proxy
            var clientLogger = logger
            clientLogger[metadataKey: "app"] = "\(app.id)"
            clientLogger[metadataKey: "environment"] = "\(environment.rawValue)"
            let client = try APNsClient(configuration: clientConfiguration, tokenIssuer: issuer, logger: clientLogger)
            logger.info(
                "APNs client created",
                metadata: [
                    "app": "\(app.id)", "environment": "\(environment.rawValue)",
                    "endpoint": "\(clientConfiguration.endpoint)",
                    "proxy": "\(clientConfiguration.proxy.map(\.description) ?? "none")",
                ])
            return client
        }
    }

    /// Shuts every client down (sends still running end with `ClientShutdown`); no client is built afterwards.
    func shutdown() async { await cache.shutdown() }
}
