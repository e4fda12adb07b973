import SealedPushGateway
import ServiceLifecycle

/// Holds the store open while the gateway runs and closes it at graceful shutdown.
///
/// Put it first in a `ServiceGroup`: services shut down in reverse order, so the store closes after every
/// service that uses it (the HTTP server, the delivery worker) has finished.
public struct StoreLifecycleService: Service, CustomStringConvertible {
    private let store: any GatewayStore

    /// Creates the service.
    /// - Parameter store: The store to close at shutdown.
    public init(store: any GatewayStore) {
        self.store = store
    }

    /// The store's type only (service groups log their services' descriptions).
    public var description: String { "StoreLifecycleService(\(type(of: store)))" }

    /// Waits for graceful shutdown (or cancellation), then closes the store.
    public func run() async throws {
        try? await gracefulShutdown()
        try await store.close()
    }
}
