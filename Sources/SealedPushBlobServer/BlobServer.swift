import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import SealedPushCore
import SealedPushServer

/// Serves a ``BlobStore`` over HTTP/1.1, so devices can fetch the blobs their notifications refer to
/// (`Specs/blob-v1.md` §7).
///
/// - `GET` and `HEAD` of `/<blob name>` (48 hex digits; anything else is `404`, other methods `405`).
/// - A single `Range: bytes=a-b`, `a-` or `-n` is answered `206` with `Content-Range`, an unsatisfiable one `416`,
///   several ranges `200` with the whole blob.
/// - A strong `ETag` (the quoted name), `If-None-Match` → `304`, `Cache-Control: public, max-age=31536000,
///   immutable`, `Content-Type: application/octet-stream`, `Accept-Ranges: bytes`.
/// - Bodies are streamed from the store in chunks as fast as the client reads them, so a 50 MB blob is never in
///   memory.
/// - Connections are bounded in number and closed when a request is too slow or nothing moves for a while.
/// - With an ``BlobServerConfiguration/Expiry``, blobs older than its age are deleted periodically.
///
/// ```swift
/// let server = BlobServer(store: try FileSystemBlobStore(directory: "/var/lib/blobs"))
/// try await server.start()
/// print("http://127.0.0.1:\(server.port)/<name>")
/// await server.stop()
/// ```
public final class BlobServer: Sendable {
    /// What a sweep found: the deleted names, or the error that stopped it.
    public typealias SweepHandler = @Sendable (Result<[BlobName], any Error>) -> Void

    /// The store served.
    public let store: any BlobStore
    /// The configuration.
    public let configuration: BlobServerConfiguration
    private let onSweep: SweepHandler?
    private let registry: ConnectionRegistry
    private let state = LockedState()

    /// Creates a server; nothing listens until ``start()``.
    ///
    /// - Parameters:
    ///   - store: The blobs to serve.
    ///   - configuration: Address, limits, timeouts and expiry.
    ///   - onSweep: Called after each expiry sweep (for logs and metrics).
    public init(store: any BlobStore, configuration: BlobServerConfiguration = .init(), onSweep: SweepHandler? = nil) {
        self.store = store
        self.configuration = configuration
        self.onSweep = onSweep
        self.registry = ConnectionRegistry(limit: max(1, configuration.maxConnections))
    }

    /// The bound port (the actual one when the configuration asked for 0); 0 before ``start()``.
    public var port: Int { state.withLock { $0.port } }

    /// The number of open connections.
    public var connectionCount: Int { registry.count }

    /// Binds and starts serving (and sweeping, with an expiry).
    ///
    /// - Throws: `invalidArgument` for a bad configuration or a second start, `io` if the address cannot be bound.
    public func start() async throws {
        guard configuration.chunkSize > 0, configuration.threads > 0, (0...65_535).contains(configuration.port) else {
            throw SealedPushError(.invalidArgument, "a blob server needs chunkSize > 0, threads > 0, port 0...65535")
        }
        try state.withLock { state in
            guard !state.started else { throw SealedPushError(.invalidArgument, "the blob server was already started") }
            state.started = true
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.threads)
        let requestTimeout = configuration.requestTimeout
        let idleTimeout = configuration.idleTimeout
        let server: NIOAsyncChannel<BlobResponder.Connection, Never>
        do {
            server = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(IdleStateHandler(allTimeout: idleTimeout))
                        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
                        try pipeline.addHandler(ConnectionTimeoutHandler(requestTimeout: requestTimeout))
                        return try BlobResponder.Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            try? await group.shutdownGracefully()
            throw SealedPushError(
                .io, "cannot listen on \(configuration.host):\(configuration.port): \(String(describing: error))")
        }

        let responder = BlobResponder(store: store, chunkSize: configuration.chunkSize)
        let registry = self.registry
        let acceptor = Task {
            await withDiscardingTaskGroup { connections in
                do {
                    try await server.executeThenClose { inbound in
                        for try await connection in inbound {
                            guard registry.admit(connection.channel) else {
                                // Over the limit or stopping: close at once (finishing the channel's writer).
                                connections.addTask { try? await connection.executeThenClose { _, _ in } }
                                continue
                            }
                            connections.addTask {
                                await responder.run(connection)
                                registry.remove(connection.channel)
                            }
                        }
                    }
                } catch {
                    // The listening socket was closed (``stop()``) or failed: stop accepting.
                }
            }
        }
        var sweeper: Task<Void, Never>?
        if let expiry = configuration.expiry {
            sweeper = Task { [weak self] in
                while !Task.isCancelled {
                    do { try await Task.sleep(for: expiry.sweepInterval) } catch { return }
                    guard let self else { return }
                    let result = await Result(catching: { try await self.sweepExpiredBlobs() })
                    self.onSweep?(result)
                }
            }
        }
        state.withLock { state in
            state.group = group
            state.serverChannel = server.channel
            state.acceptor = acceptor
            state.sweeper = sweeper
            state.port = server.channel.localAddress?.port ?? 0
        }
    }

    /// Stops gracefully: stops accepting, lets responses in flight finish (up to the configured grace period),
    /// closes idle connections at once, then the rest, and stops sweeping. Safe to call more than once.
    public func stop() async {
        let (group, serverChannel, acceptor, sweeper) = state.withLock { state in
            defer {
                state.group = nil
                state.serverChannel = nil
                state.acceptor = nil
                state.sweeper = nil
            }
            return (state.group, state.serverChannel, state.acceptor, state.sweeper)
        }
        sweeper?.cancel()
        guard let group else { return }
        try? await serverChannel?.close()
        for channel in registry.close() {
            // The HTTP pipeline closes an idle connection now and a busy one after its response ends.
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
        let giveUp = ContinuousClock.now + configuration.shutdownGracePeriod
        while registry.count > 0, ContinuousClock.now < giveUp {
            try? await Task.sleep(for: .milliseconds(20))
        }
        for channel in registry.close() { try? await channel.close() }
        await acceptor?.value
        await sweeper?.value
        try? await group.shutdownGracefully()
    }

    /// Deletes every blob older than the configured expiry age now (the sweep the server runs on its interval).
    ///
    /// - Parameter now: The current time.
    /// - Returns: The deleted names; empty without an expiry.
    /// - Throws: What the store's ``BlobStore/removeBlobs(modifiedBefore:)`` throws.
    @discardableResult
    public func sweepExpiredBlobs(now: Date = Date()) async throws -> [BlobName] {
        guard let expiry = configuration.expiry else { return [] }
        let age = expiry.maxAge.components
        let seconds = Double(age.seconds) + Double(age.attoseconds) / 1e18
        return try await store.removeBlobs(modifiedBefore: now.addingTimeInterval(-seconds))
    }
}

/// The mutable state of a ``BlobServer``, behind a lock.
private final class LockedState: @unchecked Sendable {
    struct State {
        var started = false
        var port = 0
        var group: MultiThreadedEventLoopGroup?
        var serverChannel: (any Channel)?
        var acceptor: Task<Void, Never>?
        var sweeper: Task<Void, Never>?
    }

    private let lock = NSLock()
    private var state = State()

    func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        try lock.withLock { try body(&state) }
    }
}

extension Result where Failure == any Error {
    fileprivate init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
