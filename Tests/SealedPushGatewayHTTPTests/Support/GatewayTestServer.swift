import Foundation
import Logging
import Prometheus
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushGatewayTestSupport
import SealedPushServer
import ServiceLifecycle
import Testing

/// A real gateway for one test: a store on a real database, two apps with their API keys and server identities,
/// and the HTTP server listening on 127.0.0.1 (port 0) in the gateway's own service group.
final class GatewayTestServer: Sendable {
    static let topic = "com.example.sealedpush.test"

    let backend: Backend
    let directory: URL
    let store: any GatewayStore
    let logs: CapturedLogs
    let registry: PrometheusCollectorRegistry
    let client: HTTPTestClient
    /// The server identity of each app, by app id.
    let identities: [String: ServerIdentity]
    /// The API key text of each app, by app id (`app1`, `app2`).
    let keys: [String: String]
    let maxBodyBytes: Int
    let postgres: PostgresTestDatabase?
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    var sqlitePath: String { directory.appendingPathComponent("gateway.sqlite").path }
    /// The blob store's directory (with an overflow prefix).
    var blobDirectory: String { directory.appendingPathComponent("blobs").path }

    /// Attachments fetched over plain HTTP from loopback test servers (private addresses allowed).
    static var loopbackFetchPolicy: AttachmentFetchPolicy {
        var policy = AttachmentFetchPolicy()
        policy.allowHTTP = true
        policy.allowPrivateAddresses = true
        policy.timeout = .seconds(30)  // generous: TSan and a loaded CI machine are slow; the deadline test sets its own
        return policy
    }

    static func start(
        _ backend: Backend, maxBodyBytes: Int = 16_384, overflowPrefix: String? = nil, rateLimits: RateLimits = RateLimits(),
        fetchPolicy: AttachmentFetchPolicy = GatewayTestServer.loopbackFetchPolicy,
        wrapStore: @Sendable (any GatewayStore) -> any GatewayStore = { $0 },
        configure: (inout GatewayHTTPConfiguration) -> Void = { _ in }
    ) async throws -> GatewayTestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gwhttp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let logs = CapturedLogs()
        let postgres = backend == .postgres ? try await PostgresTestDatabase.create(prefix: "sp_http_") : nil
        let store: any GatewayStore =
            switch backend {
            case .sqlite: try SQLiteGatewayStore(path: directory.appendingPathComponent("gateway.sqlite").path)
            case .postgres: try PostgresGatewayStore(url: postgres!.url, logger: logs.logger(label: "db"))
            }
        _ = try await store.migrate()

        var identities: [String: ServerIdentity] = [:]
        var keys: [String: String] = [:]
        for appID in ["app1", "app2"] {
            let identity = try ServerIdentity.generate()
            let path = directory.appendingPathComponent("\(appID).identity").path
            try identity.write(toFile: path)
            try await store.putApp(
                GatewayApp(
                    id: appID, topic: topic, teamID: "TEAM123456", apnsKeyID: "KEY1234567", apnsKeyPath: "/nonexistent.p8",
                    serverIdentityPath: path),
                now: Date())
            let key = APIKey.generate()
            try await store.addAPIKey(StoredAPIKey(key: key, appID: appID))
            identities[appID] = identity
            keys[appID] = key.text
        }

        let registry = PrometheusCollectorRegistry()
        var overflow: OverflowConfiguration?
        if let overflowPrefix {
            let blobs = directory.appendingPathComponent("blobs").path
            try FileManager.default.createDirectory(atPath: blobs, withIntermediateDirectories: true)
            overflow = OverflowConfiguration(
                store: try FileSystemBlobStore(directory: blobs), urlPrefix: overflowPrefix, fetchPolicy: fetchPolicy)
        }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let served = wrapStore(store)
        var configuration = GatewayHTTPConfiguration(
            host: "127.0.0.1", port: 0, maxBodyBytes: maxBodyBytes, rateLimits: rateLimits)
        configure(&configuration)
        let http = GatewayHTTPServer(
            configuration: configuration,
            store: served, metrics: GatewayMetrics(registry: registry), overflow: overflow,
            logger: logs.logger(label: "http"), onListening: { port in portSink.yield(port) })
        let group = GatewayServiceGroup.make(store: served, http: http, signals: [], logger: logs.logger(label: "group"))
        let running = Task { try await group.run() }
        var port = 0
        for await bound in ports {
            port = bound
            break
        }
        return GatewayTestServer(
            backend: backend, directory: directory, store: store, logs: logs, registry: registry,
            client: HTTPTestClient(port: port), identities: identities, keys: keys, maxBodyBytes: maxBodyBytes,
            postgres: postgres, group: group, running: running)
    }

    private init(
        backend: Backend, directory: URL, store: any GatewayStore, logs: CapturedLogs, registry: PrometheusCollectorRegistry,
        client: HTTPTestClient, identities: [String: ServerIdentity], keys: [String: String], maxBodyBytes: Int,
        postgres: PostgresTestDatabase?, group: ServiceGroup, running: Task<Void, any Error>
    ) {
        self.backend = backend
        self.directory = directory
        self.store = store
        self.logs = logs
        self.registry = registry
        self.client = client
        self.identities = identities
        self.keys = keys
        self.maxBodyBytes = maxBodyBytes
        self.postgres = postgres
        self.group = group
        self.running = running
    }

    /// Graceful shutdown of the group (server, then store), then the test's files and database are removed.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
        try? FileManager.default.removeItem(at: directory)
        try await postgres?.drop()
    }

    /// Graceful shutdown only (files and database stay, for reading them raw).
    func shutDown() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }

    /// Removes the files and the database after ``shutDown()``.
    func cleanUp() async throws {
        try? FileManager.default.removeItem(at: directory)
        try await postgres?.drop()
    }

    /// Everything the database holds: the SQLite file and its WAL byte for byte, or PostgreSQL's rows as text.
    func rawDatabase() async throws -> [(name: String, bytes: [UInt8])] {
        if let postgres { return try await postgres.rawContents() }
        return try ["", "-wal"].compactMap { suffix in
            let file = sqlitePath + suffix
            guard FileManager.default.fileExists(atPath: file) else { return nil }
            return (name: "gateway.sqlite\(suffix)", bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        }
    }

    // MARK: Calls

    /// A device of `app` with a fresh key ring, registered over HTTP.
    @discardableResult
    func registerDevice(_ deviceID: String, app: String = "app1", user: String? = nil) async throws -> DeviceKeyRing {
        let ring = DeviceKeyRing.generate(now: UInt64(Date().timeIntervalSince1970))
        // Its own token: a token belongs to one device per app and environment (registering it again moves it).
        var body = Self.deviceBody(ring.registration(), token: Self.token(for: deviceID))
        if let user { body["userId"] = user }
        let answer = try await client.send("PUT", "/v1/apps/\(app)/devices/\(deviceID)", key: keys[app], json: body)
        guard answer.status == 201 || answer.status == 200 else {
            throw TestFailure("registering \(deviceID) answered \(answer.status): \(answer.text)")
        }
        return ring
    }

    /// A token of its own for a device id: the id's bytes in hex, padded with `ab` to 32 bytes.
    static func token(for deviceID: String) -> String {
        let hex = deviceID.utf8.prefix(32).map { String(format: "%02x", $0) }.joined()
        return hex + String(repeating: "ab", count: 32 - hex.count / 2)
    }

    static func deviceBody(_ registration: DeviceRegistration, token: String = String(repeating: "ab", count: 32))
        -> [String: Any]
    {
        var record: [String: Any] = [
            "version": 1, "publicKey": registration.publicKey, "keyId": registration.keyId,
            "createdAt": DeviceRegistration.formatDate(registration.createdAt),
        ]
        if let expiresAt = registration.expiresAt { record["expiresAt"] = DeviceRegistration.formatDate(expiresAt) }
        return ["apnsToken": token, "environment": "sandbox", "registration": record]
    }

    /// Opens a sealed APNs body as the device would (SealedPushClient, swift-crypto).
    func open(_ body: [UInt8], with ring: DeviceKeyRing, app: String = "app1") throws -> NotificationContent {
        let opener = try EnvelopeOpener(
            keyRing: ring, serverPublicKeys: [identities[app]!.publicKey], topic: Self.topic)
        return try opener.open(body: body, now: UInt64(Date().timeIntervalSince1970)).content
    }
}

extension GatewayTestServer {
    /// Runs `body` with a started server and always stops it (graceful shutdown, files and database removed).
    static func with<T>(
        _ backend: Backend, maxBodyBytes: Int = 16_384, overflowPrefix: String? = nil,
        fetchPolicy: AttachmentFetchPolicy = GatewayTestServer.loopbackFetchPolicy, rateLimits: RateLimits = RateLimits(),
        wrapStore: @Sendable (any GatewayStore) -> any GatewayStore = { $0 },
        _ body: (GatewayTestServer) async throws -> T
    ) async throws -> T {
        let server = try await start(
            backend, maxBodyBytes: maxBodyBytes, overflowPrefix: overflowPrefix, rateLimits: rateLimits,
            fetchPolicy: fetchPolicy, wrapStore: wrapStore)
        do {
            let result = try await body(server)
            try await server.stop()
            return result
        } catch {
            try? await server.stop()
            throw error
        }
    }
}
