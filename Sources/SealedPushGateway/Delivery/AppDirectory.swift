import Foundation
import SealedPushCore

/// App records for delivery, cached for ``DeliveryConfiguration/appRefreshInterval`` so a busy node does not read
/// the app for every job, yet sees new credentials soon.
actor AppDirectory {
    private let store: any GatewayStore
    private let refreshInterval: Duration
    private var apps: [String: (app: GatewayApp, readAt: ContinuousClock.Instant)] = [:]

    init(store: any GatewayStore, refreshInterval: Duration) {
        self.store = store
        self.refreshInterval = refreshInterval
    }

    /// The app record, from the cache while it is fresh.
    /// - Throws: The store's error; `SealedPushError` `invalidArgument` when the app does not exist.
    func app(id: String) async throws -> GatewayApp {
        let now = ContinuousClock.now
        if let cached = apps[id], cached.readAt.duration(to: now) < refreshInterval {
            return cached.app
        }
        guard let app = try await store.app(id: id) else {
            throw SealedPushError(.invalidArgument, "app '\(id)' is not in the store")
        }
        apps[id] = (app, now)
        return app
    }
}
