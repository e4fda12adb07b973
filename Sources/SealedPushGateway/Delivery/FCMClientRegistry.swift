import Foundation
import Logging
import SealedPushCore
import SealedPushFCM
import SealedPushServer

/// One `FCMClient` per app, built on first use from the app's FCM credentials (its service-account file, read when
/// the client is built, and project id).
///
/// A client is rebuilt when the app's service-account path or project changes; the old one is kept (its sends may
/// still be running) and shut down with the others when the service stops.
actor FCMClientRegistry {
    private struct Entry {
        var credentials: FCMAppCredentials
        var client: FCMClient
    }

    private let configuration: DeliveryConfiguration
    private let logger: Logger
    private var clients: [String: Entry] = [:]
    private var retired: [FCMClient] = []
    private var closed = false

    init(configuration: DeliveryConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The client for an app, built if needed.
    /// - Throws: `SealedPushError` when the app has no FCM credentials, the service-account file cannot be read
    ///   (missing, not 0600, malformed), or the registry was shut down.
    func client(for app: GatewayApp) throws -> FCMClient {
        guard !closed else { throw SealedPushError(.invalidArgument, "the delivery service is shutting down") }
        guard let credentials = app.fcm else {
            throw SealedPushError(
                .invalidArgument, "app '\(app.id)' has FCM devices but no FCM credentials (project, service account)")
        }
        if let entry = clients[app.id] {
            if entry.credentials == credentials { return entry.client }
            retired.append(entry.client)
            clients[app.id] = nil
        }
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
        var clientLogger = logger
        clientLogger[metadataKey: "app"] = "\(app.id)"
        let client = try FCMClient(configuration: clientConfiguration, logger: clientLogger)
        clients[app.id] = Entry(credentials: credentials, client: client)
        logger.info(
            "FCM client created",
            metadata: [
                "app": "\(app.id)", "project": "\(credentials.projectID)",
                "endpoint": "\(configuration.fcmEndpoint.host):\(configuration.fcmEndpoint.port)",
            ])
        return client
    }

    /// Shuts every client down; no client is built afterwards.
    func shutdown() async {
        closed = true
        let all = clients.values.map(\.client) + retired
        clients = [:]
        retired = []
        for client in all { await client.shutdown() }
    }
}
