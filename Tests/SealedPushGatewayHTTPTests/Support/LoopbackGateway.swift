import Foundation
import Logging
import Prometheus
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushGatewayTestSupport
import SealedPushServer
import ServiceLifecycle

/// A whole gateway on loopback, end to end: the TLS + HTTP/2 APNs emulator, one app whose `.p8` key the emulator
/// knows, and one or more nodes on a shared database. Each node is what `sealed-push-gateway serve` runs: its own
/// store (its own SQLite connection or PostgreSQL pool), its `DeliveryService` and its HTTP server, in the
/// gateway's service group.
final class LoopbackGateway: Sendable {
    static let appID = "app1"
    static let topic = "com.example.sealedpush.e2e"
    static let keyID = "E2EKEY1234"
    static let teamID = "TEAM123456"
    /// How long ``stop()`` waits for each node: its delivery grace period (10 s) and a margin.
    static let stopDeadline: Duration = .seconds(30)

    /// One node: its store, its API's client and its running service group.
    struct Node: Sendable {
        let id: String
        let store: any GatewayStore
        let client: HTTPTestClient
        let group: ServiceGroup
        let running: Task<Void, any Error>
    }

    let backend: Backend
    let emulator: APNsEmulator
    let directory: URL
    let nodes: [Node]
    /// The app's API key.
    let key: String
    /// The PEM of the app's `.p8` (for a bare `APNsClient` on the same emulator).
    let keyPath: String
    /// The app's server identity (devices pin its public key).
    let identity: ServerIdentity
    private let postgres: PostgresTestDatabase?

    /// Starts the emulator and `nodeCount` nodes.
    /// - Parameters:
    ///   - backend: The database the nodes share (a new SQLite file, or a new PostgreSQL database).
    ///   - nodeCount: How many nodes.
    ///   - maxConnections: Connections per node the API client may open.
    ///   - emulator: Adjusts the emulator's configuration.
    ///   - delivery: Adjusts each node's delivery configuration (node id and endpoints already set).
    static func start(
        _ backend: Backend, nodes nodeCount: Int, maxConnections: Int = 32,
        emulator configureEmulator: (inout APNsEmulatorConfiguration) -> Void = { _ in },
        delivery configureDelivery: (inout DeliveryConfiguration) -> Void = { _ in }
    ) async throws -> LoopbackGateway {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyed = try await KeyedEmulator.start(
            in: directory, keyID: keyID, teamID: teamID, topic: topic, configureEmulator)
        let emulator = keyed.emulator
        let keyPath = keyed.keyPath

        let postgres = backend == .postgres ? try await PostgresTestDatabase.create(prefix: "sp_e2e_") : nil
        let sqlitePath = directory.appendingPathComponent("gateway.sqlite").path
        func makeStore() throws -> any GatewayStore {
            switch backend {
            case .sqlite: try SQLiteGatewayStore(path: sqlitePath)
            case .postgres: try PostgresGatewayStore(url: postgres!.url, logger: quietLogger("db"))
            }
        }

        let identity = try ServerIdentity.generate()
        let identityPath = directory.appendingPathComponent("\(appID).identity").path
        try identity.write(toFile: identityPath)
        let apiKey = APIKey.generate()
        var nodes: [Node] = []
        do {
            for index in 0..<nodeCount {
                let store = try makeStore()
                _ = try await store.migrate()
                if index == 0 {
                    try await store.putApp(
                        GatewayApp(
                            id: appID, topic: topic, teamID: teamID, apnsKeyID: keyID, apnsKeyPath: keyPath,
                            serverIdentityPath: identityPath),
                        now: Date())
                    try await store.addAPIKey(StoredAPIKey(key: apiKey, appID: appID))
                }
                var client = APNsClientConfiguration(
                    endpoint: APNsEndpoint(host: "127.0.0.1", port: emulator.port),
                    trustRoots: .pem(emulator.certificatePEM))
                client.requestTimeout = .seconds(10)
                client.deadline = .seconds(30)
                var delivery = DeliveryConfiguration(nodeID: "node-\(index)", client: client)
                delivery.productionEndpoint = client.endpoint
                delivery.sandboxEndpoint = client.endpoint
                delivery.shutdownGracePeriod = .seconds(10)
                configureDelivery(&delivery)
                let service = try DeliveryService(
                    store: store, configuration: delivery, logger: quietLogger("delivery-\(index)"))
                let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
                let http = GatewayHTTPServer(
                    configuration: GatewayHTTPConfiguration(host: "127.0.0.1", port: 0),
                    store: store, metrics: GatewayMetrics(registry: PrometheusCollectorRegistry()),
                    logger: quietLogger("http-\(index)"), webhook: service.webhook,
                    delivery: service, onListening: { port in portSink.yield(port) })
                let group = GatewayServiceGroup.make(
                    store: store, http: http, extraServices: [service], signals: [], logger: quietLogger("group"))
                let running = Task { try await group.run() }
                var port = 0
                for await bound in ports {
                    port = bound
                    break
                }
                guard port > 0 else { throw TestFailure("node-\(index) did not start listening") }
                nodes.append(
                    Node(
                        id: "node-\(index)", store: store, client: HTTPTestClient(port: port, maxConnections: maxConnections),
                        group: group, running: running))
            }
        } catch {
            for node in nodes {
                await node.group.triggerGracefulShutdown()
                _ = try? await node.running.value
            }
            await emulator.stop()
            try? await postgres?.drop()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        return LoopbackGateway(
            backend: backend, emulator: emulator, directory: directory, nodes: nodes, key: apiKey.text,
            keyPath: keyPath, identity: identity, postgres: postgres)
    }

    private init(
        backend: Backend, emulator: APNsEmulator, directory: URL, nodes: [Node], key: String, keyPath: String,
        identity: ServerIdentity, postgres: PostgresTestDatabase?
    ) {
        self.identity = identity
        self.backend = backend
        self.emulator = emulator
        self.directory = directory
        self.nodes = nodes
        self.key = key
        self.keyPath = keyPath
        self.postgres = postgres
    }

    /// Shuts every node down gracefully (HTTP, delivery, store), stops the emulator, removes files and database.
    func stop() async throws {
        let log = Self.quietLogger("stop")
        for node in nodes { await node.group.triggerGracefulShutdown() }
        var failure: (any Error)?
        for node in nodes {
            // Bounded: a node that does not stop (a store call stuck in the driver, say) fails the test.
            let stopped = Flag()
            let watcher = Task {
                defer { stopped.set() }
                try await node.running.value
            }
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: Self.stopDeadline)
            while !stopped.isSet && clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            guard stopped.isSet else {
                throw TestFailure("\(node.id) did not stop within \(Self.stopDeadline) of the shutdown request")
            }
            do { try await watcher.value } catch { failure = failure ?? error }
            log.info("node stopped", metadata: ["node": "\(node.id)"])
        }
        await emulator.stop()
        log.info("emulator stopped")
        try? FileManager.default.removeItem(at: directory)
        try await postgres?.drop()
        log.info("database dropped")
        if let failure { throw failure }
    }

    /// The database's raw bytes (the SQLite file and its WAL, or the PostgreSQL database's files).
    func rawDatabase() async throws -> [(name: String, bytes: [UInt8])] {
        if let postgres { return try await postgres.rawContents() }
        let path = directory.appendingPathComponent("gateway.sqlite").path
        return try ["", "-wal"].compactMap { suffix in
            guard FileManager.default.fileExists(atPath: path + suffix) else { return nil }
            return (name: "gateway.sqlite\(suffix)", bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + suffix))))
        }
    }

    /// A well-formed 64-hex-digit token for a device number.
    static func token(_ number: Int) -> String {
        let digits = String(number + 1, radix: 16)
        return String(repeating: "c", count: 64 - digits.count) + digits
    }

    /// Registers `device-0` … `device-(count-1)` over the API of node 0 (tokens ``token(_:)``, sandbox for even
    /// numbers and production for odd: both endpoints lead to the emulator).
    /// - Returns: The device ids.
    func registerDevices(_ count: Int) async throws -> [String] {
        var ids: [String] = []
        for number in 0..<count {
            let id = "device-\(number)"
            let ring = DeviceKeyRing.generate(now: UInt64(Date().timeIntervalSince1970))
            var body = GatewayTestServer.deviceBody(ring.registration(), token: Self.token(number))
            body["environment"] = number % 2 == 0 ? "sandbox" : "production"
            let answer = try await nodes[0].client.send(
                "PUT", "/v1/apps/\(Self.appID)/devices/\(id)", key: key, json: body)
            guard answer.status == 201 else { throw TestFailure("registering \(id) answered \(answer.status)") }
            ids.append(id)
        }
        return ids
    }

    /// Posts a send request to a node's API.
    /// - Returns: The notification id of a `202`.
    /// - Parameters:
    ///   - idempotencyKey: The `Idempotency-Key` header, if any.
    ///   - retries: How often a `503` is retried (after 250 ms; with an idempotency key the retry cannot double it).
    func send(
        to devices: [String], content: String, node: Int = 0, collapseID: String? = nil, idempotencyKey: String? = nil,
        retries: Int = 0
    ) async throws -> UUID {
        var request: [String: Any] = ["devices": devices, "content": ["body": content], "ttl": 3600]
        if let collapseID { request["collapseId"] = collapseID }
        var answer = try await nodes[node].client.send(
            "POST", "/v1/apps/\(Self.appID)/notifications", key: key, json: request,
            headers: idempotencyKey.map { ["Idempotency-Key": $0] } ?? [:])
        var left = retries
        while answer.status == 503 && left > 0 {
            left -= 1
            try await Task.sleep(for: .milliseconds(250))
            answer = try await nodes[node].client.send(
                "POST", "/v1/apps/\(Self.appID)/notifications", key: key, json: request,
                headers: idempotencyKey.map { ["Idempotency-Key": $0] } ?? [:])
        }
        guard answer.status == 202, let text = answer.json["id"] as? String, let id = UUID(uuidString: text) else {
            throw TestFailure("send answered \(answer.status): \(answer.json["code"] ?? "")")
        }
        return id
    }

    /// The delivery states of a notification by device id, read over the API of node 0.
    func deliveries(_ id: UUID) async throws -> [String: [String: Any]] {
        let answer = try await nodes[0].client.send(
            "GET", "/v1/apps/\(Self.appID)/notifications/\(id.uuidString.lowercased())", key: key)
        guard answer.status == 200, let list = answer.json["deliveries"] as? [[String: Any]] else {
            throw TestFailure("status answered \(answer.status)")
        }
        var byDevice: [String: [String: Any]] = [:]
        for delivery in list { if let device = delivery["deviceId"] as? String { byDevice[device] = delivery } }
        return byDevice
    }

    /// A logger that logs nothing but critical lines, or at the level `LOOPBACK_GATEWAY_LOG` names (`info`,
    /// `warning`, …) to stderr when debugging a run (ids, reasons and errors; never content).
    static func quietLogger(_ label: String) -> Logger {
        if let level = ProcessInfo.processInfo.environment["LOOPBACK_GATEWAY_LOG"].flatMap(Logger.Level.init(rawValue:)) {
            var logger = Logger(label: "test.\(label)", factory: { StreamLogHandler.standardError(label: $0) })
            logger.logLevel = level
            return logger
        }
        var logger = Logger(label: "test.\(label)")
        logger.logLevel = .critical
        return logger
    }
}

extension LoopbackGateway {
    /// Runs `body` with a started gateway and always stops it.
    static func with<T>(
        _ backend: Backend, nodes: Int, emulator: (inout APNsEmulatorConfiguration) -> Void = { _ in },
        delivery: (inout DeliveryConfiguration) -> Void = { _ in }, _ body: (LoopbackGateway) async throws -> T
    ) async throws -> T {
        let gateway = try await start(backend, nodes: nodes, emulator: emulator, delivery: delivery)
        do {
            let result = try await body(gateway)
            try await gateway.stop()
            return result
        } catch {
            try? await gateway.stop()
            throw error
        }
    }
}

