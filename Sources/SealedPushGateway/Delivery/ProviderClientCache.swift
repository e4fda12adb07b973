import SealedPushCore

/// A provider client that ends its connections when told to.
protocol ShutdownableProviderClient: Sendable {
    /// Ends the client's connections; sends still running fail.
    func shutdown() async
}

/// The clients of one provider, one per key (an app, or an app and an environment), each built on first use from
/// what the app record says (``Source``: key file, key id, team; or project and service-account file).
///
/// A client is rebuilt when its source changes; the old one is kept (its sends may still be running) and shut down
/// with the others when the service stops. The APNs and FCM registries are this cache with their own builders.
actor ProviderClientCache<Key: Hashable & Sendable, Source: Equatable & Sendable, Client: ShutdownableProviderClient> {
    private var clients: [Key: (source: Source, client: Client)] = [:]
    private var retired: [Client] = []
    private var closed = false

    /// The client for `key`, built by `build` if there is none yet or it was built from another source.
    ///
    /// - Parameters:
    ///   - key: Which client.
    ///   - source: What the client must have been built from.
    ///   - build: Builds a client from `source`.
    /// - Returns: The client.
    /// - Throws: What `build` throws, or `SealedPushError` (`invalidArgument`) once the cache was shut down.
    func client(for key: Key, builtFrom source: Source, build: @Sendable () throws -> Client) throws -> Client {
        guard !closed else { throw SealedPushError(.invalidArgument, "the delivery service is shutting down") }
        if let entry = clients[key] {
            if entry.source == source { return entry.client }
            retired.append(entry.client)
            clients[key] = nil
        }
        let client = try build()
        clients[key] = (source, client)
        return client
    }

    /// Shuts every client down (sends still running fail); no client is built afterwards.
    func shutdown() async {
        closed = true
        let all = clients.values.map(\.client) + retired
        clients = [:]
        retired = []
        for client in all { await client.shutdown() }
    }
}
