import Foundation
import Logging
import NIOCore
import NIOSSL

/// Hands out request slots on a bounded set of connections.
///
/// - A connection carries at most `min(our cap, the server's SETTINGS_MAX_CONCURRENT_STREAMS)` requests, and
///   only one until a request on it with the provider token succeeded (Apple's rule for new connections).
/// - A connection that received GOAWAY or closed takes no new requests; new connections open on demand (up to
///   `maxConnections`), so sending recovers by itself after Apple closes a connection.
/// - Waiting for a slot is bounded by the caller's deadline.
actor APNsConnectionPool {
    struct Lease: Sendable {
        let connection: APNsConnection
    }

    enum AcquireError: Error {
        case deadlineExceeded
        case connectFailed(String)
        case shutDown
    }

    private struct Entry {
        let connection: APNsConnection
        var inFlight = 0
        var serverLimit: Int?
        var validated = false
        var usable = true
    }

    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Lease, Error>
        let timer: Task<Void, Never>
    }

    private let endpoint: APNsEndpoint
    private let sslContext: NIOSSLContext
    private let group: EventLoopGroup
    private let maxConnections: Int
    private let streamCap: Int
    private let connectTimeout: Duration
    private let logger: Logger
    private let statistics: APNsClientStatistics

    private var entries: [Int: Entry] = [:]
    private var connecting = 0
    private var nextID = 1
    private var waiters: [Waiter] = []
    private var isShutDown = false

    init(
        endpoint: APNsEndpoint, sslContext: NIOSSLContext, group: EventLoopGroup, maxConnections: Int,
        streamCap: Int, connectTimeout: Duration, logger: Logger, statistics: APNsClientStatistics
    ) {
        self.endpoint = endpoint
        self.sslContext = sslContext
        self.group = group
        self.maxConnections = maxConnections
        self.streamCap = streamCap
        self.connectTimeout = connectTimeout
        self.logger = logger
        self.statistics = statistics
    }

    /// A slot on a usable connection, waiting (and connecting) as needed until `deadline`.
    func acquire(deadline: ContinuousClock.Instant) async throws -> Lease {
        if isShutDown { throw AcquireError.shutDown }
        if waiters.isEmpty, let lease = takeSlot() { return lease }
        let id = nextID
        nextID += 1
        return try await withCheckedThrowingContinuation { continuation in
            let timer = Task { [weak self] in
                try? await Task.sleep(until: deadline, clock: .continuous)
                await self?.expire(id)
            }
            waiters.append(Waiter(id: id, continuation: continuation, timer: timer))
            dispatch()
        }
    }

    /// Returns a slot. `tokenAccepted`: the request got an answer other than 403 (the token was accepted).
    /// `retire`: the request was cut off by GOAWAY or a connection failure; take no new requests on it.
    func release(_ lease: Lease, tokenAccepted: Bool, retire: Bool = false) {
        let id = lease.connection.id
        if var entry = entries[id] {
            entry.inFlight = max(0, entry.inFlight - 1)
            if tokenAccepted { entry.validated = true }
            if retire { entry.usable = false }
            entries[id] = entry
            if !entry.usable && entry.inFlight == 0 {
                entries[id] = nil
                entry.connection.close()
            }
        }
        dispatch()
    }

    /// Closes everything; waiters fail.
    func shutdown() {
        isShutDown = true
        for entry in entries.values { entry.connection.close() }
        entries.removeAll()
        let pending = waiters
        waiters.removeAll()
        for waiter in pending {
            waiter.timer.cancel()
            waiter.continuation.resume(throwing: AcquireError.shutDown)
        }
    }

    private func capacity(_ entry: Entry) -> Int {
        guard entry.validated else { return 1 }
        return max(1, min(streamCap, entry.serverLimit ?? streamCap))
    }

    private func takeSlot() -> Lease? {
        var best: Int?
        var bestFree = 0
        for (id, entry) in entries where entry.usable {
            let free = capacity(entry) - entry.inFlight
            if free > bestFree {
                best = id
                bestFree = free
            }
        }
        guard let best, var entry = entries[best] else { return nil }
        entry.inFlight += 1
        entries[best] = entry
        statistics.recordPeak(entry.inFlight)
        return Lease(connection: entry.connection)
    }

    private func dispatch() {
        while !waiters.isEmpty, let lease = takeSlot() {
            let waiter = waiters.removeFirst()
            waiter.timer.cancel()
            waiter.continuation.resume(returning: lease)
        }
        guard !waiters.isEmpty, !isShutDown else { return }
        let usable = entries.values.filter(\.usable).count
        // Open another connection when every usable one is full (or there is none), within the limit. While a
        // connection is still unvalidated (one stream), wait for it rather than opening more.
        let anyUnvalidated = entries.values.contains { $0.usable && !$0.validated }
        if connecting == 0, usable + connecting < maxConnections, usable == 0 || !anyUnvalidated {
            openConnection()
        }
    }

    private func openConnection() {
        connecting += 1
        let id = nextID
        nextID += 1
        let endpoint = endpoint
        let sslContext = sslContext
        let group = group
        let timeout = connectTimeout
        let logger = logger
        Task {
            do {
                let connection = try await APNsConnection.connect(
                    id: id, endpoint: endpoint, sslContext: sslContext, group: group, timeout: timeout, logger: logger
                ) { [weak self] event in
                    Task { await self?.handle(event, connectionID: id) }
                }
                self.connected(connection)
            } catch {
                self.connectFailed(error)
            }
        }
    }

    private func connected(_ connection: APNsConnection) {
        connecting -= 1
        if isShutDown {
            connection.close()
            return
        }
        statistics.increment(\.connectionsOpened)
        logger.debug("APNs connection ready", metadata: ["connection": "\(connection.id)", "endpoint": "\(endpoint)"])
        if entries[connection.id] == nil, connection.channel.isActive {
            entries[connection.id] = Entry(
                connection: connection, serverLimit: pendingLimits.removeValue(forKey: connection.id))
        }
        dispatch()
    }

    /// SETTINGS can arrive before `connected` registers the entry.
    private var pendingLimits: [Int: Int] = [:]

    private func connectFailed(_ error: Error) {
        connecting -= 1
        statistics.increment(\.connectFailures)
        logger.warning("APNs connect failed", metadata: ["endpoint": "\(endpoint)", "error": "\(error)"])
        // Without any usable connection the waiters cannot progress: let them retry with backoff.
        if !entries.values.contains(where: \.usable) {
            let pending = waiters
            waiters.removeAll()
            for waiter in pending {
                waiter.timer.cancel()
                waiter.continuation.resume(throwing: AcquireError.connectFailed("\(error)"))
            }
        }
        dispatch()
    }

    private func handle(_ event: APNsConnectionEvent, connectionID: Int) {
        switch event {
        case .settings(let limit):
            if var entry = entries[connectionID] {
                if let limit { entry.serverLimit = limit }
                entries[connectionID] = entry
            } else if let limit {
                pendingLimits[connectionID] = limit
            }
        case .goAway:
            statistics.increment(\.goAwaysReceived)
            markUnusable(connectionID)
        case .closed:
            pendingLimits[connectionID] = nil
            if let entry = entries.removeValue(forKey: connectionID) {
                logger.debug("APNs connection closed", metadata: ["connection": "\(entry.connection.id)"])
            }
        }
        dispatch()
    }

    private func markUnusable(_ id: Int) {
        guard var entry = entries[id] else { return }
        entry.usable = false
        entries[id] = entry
        if entry.inFlight == 0 {
            entries[id] = nil
            entry.connection.close()
        }
    }

    private func expire(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        let waiter = waiters.remove(at: index)
        waiter.continuation.resume(throwing: AcquireError.deadlineExceeded)
    }
}
