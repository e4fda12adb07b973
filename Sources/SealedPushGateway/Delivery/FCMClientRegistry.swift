import Foundation
import Logging
import SealedPushCore
import SealedPushFCM
import SealedPushServer

extension FCMClient: ShutdownableProviderClient {}

/// One `FCMClient` per app, built on first use from the app's FCM credentials (its service-account file, read when
/// the client is built, and project id), and rebuilt when they change (``ProviderClientCache``).
struct FCMClientRegistry: Sendable {
    private let configuration: DeliveryConfiguration
    private let logger: Logger
    private let cache = ProviderClientCache<String, FCMAppCredentials, FCMClient>()

    init(configuration: DeliveryConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The client for an app, built if needed.
    /// - Throws: `SealedPushError` when the app has no FCM credentials, the service-account file cannot be read
    ///   (missing, not 0600, malformed), or the registry was shut down.
    func client(for app: GatewayApp) async throws -> FCMClient {
        guard let credentials = app.fcm else {
            throw SealedPushError(
                .invalidArgument, "app '\(app.id)' has FCM devices but no FCM credentials (project, service account)")
        }
        let (configuration, logger) = (configuration, logger)
        return try await cache.client(for: app.id, builtFrom: credentials) {
            let account = try FCMServiceAccount(contentsOfFile: credentials.serviceAccountPath)
            var clientConfiguration = FCMClientConfiguration(
                serviceAccount: account, endpoint: configuration.fcmEndpoint, projectID: credentials.projectID)
            // Requests, retries and their waits end within the per-send deadline the lease covers.
            let deadline = configuration.client.deadline
            clientConfiguration.requestTimeout = min(configuration.fcmRequestTimeout, deadline)
            clientConfiguration.connectTimeout = min(clientConfiguration.connectTimeout, clientConfiguration.requestTimeout)
            var retry = configuration.fcmRetry
            retry.maxTotal = max(.zero, min(retry.maxTotal, deadline - clientConfiguration.requestTimeout))
            clientConfiguration.retry = retry
            clientConfiguration.proxy = configuration.proxy
            var clientLogger = logger
            clientLogger[metadataKey: "app"] = "\(app.id)"
            let client = try FCMClient(configuration: clientConfiguration, logger: clientLogger)
            logger.info(
                "FCM client created",
                metadata: [
                    "app": "\(app.id)", "project": "\(credentials.projectID)",
                    "endpoint": "\(configuration.fcmEndpoint.host):\(configuration.fcmEndpoint.port)",
                    "proxy": "\(configuration.proxy.map(\.description) ?? "none")",
                ])
            return client
        }
    }

    /// Shuts every client down; no client is built afterwards.
    func shutdown() async { await cache.shutdown() }
}
