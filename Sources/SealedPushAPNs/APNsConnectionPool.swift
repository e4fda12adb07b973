import Foundation
import Logging
import NIOCore
import NIOSSL
import SealedPushCore

/// Hands out request slots on a bounded set of connections, spreading requests over all of them.
///
/// - A connection carries at most `min(our cap, the server's SETTINGS_MAX_CONCURRENT_STREAMS)` requests, and
///   only one until a request on it with the provider token succeeded (Apple's rule for new connections).
/// - While requests are in flight or waiting and fewer than `maxConnections` usable connections are open, more
///   open: a single one until a request has succeeded on one (a bad token fails on one connection, not on all of
///   them), then all the missing ones at once. After a failed connect while others work, growth pauses (1 s,
///   doubling to 30 s).
/// - Each request goes to the least-loaded connection with a free slot (fewest requests in flight; among equals,
///   the one that carried fewest so far), so `maxConnections` connections share the load even far below one
///   connection's stream limit.
/// - A connection that received GOAWAY or closed takes no new requests; new connections open on demand, so
///   sending recovers by itself after Apple closes a connection.
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
        /// Requests it carried in all.
        var carried = 0
    }

    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Lease, Error>
        /// Ends the wait at its deadline: a NIO scheduled task, cancelled when the waiter is served (a cancelled
        /// `Task.sleep` stayed allocated on this platform's runtime, about 300 bytes a wait, which adds up under
        /// GOAWAY storms when sends queue for a connection).
        let timer: Scheduled<Void>
    }

    private let endpoint: APNsEndpoint
    private let sslContext: NIOSSLContext
    private let group: EventLoopGroup
    private let maxConnections: Int
    private let streamCap: Int
    private let connectTimeout: Duration
    /// The proxy every connection tunnels through, if any.
    private let proxy: ProviderProxy?
    private let logger: Logger
    private let statistics: APNsClientStatistics

    private var entries: [Int: Entry] = [:]
    private var connecting = 0
    private var nextID = 1
    private var waiters: [Waiter] = []
    private var isShutDown = false
    /// After a failed connect while other connections work, no further connection opens before this instant
    /// (1 s, doubling per failure up to 30 s): extra connections are an optimisation, not worth a connect storm.
    private var growPausedUntil: ContinuousClock.Instant?
    private var growPause: Duration = .seconds(1)

    init(
        endpoint: APNsEndpoint, sslContext: NIOSSLContext, group: EventLoopGroup, maxConnections: Int,
        streamCap: Int, connectTimeout: Duration, proxy: ProviderProxy?, logger: Logger,
        statistics: APNsClientStatistics
    ) {
        self.endpoint = endpoint
        self.proxy = proxy
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
        if waiters.isEmpty, let lease = takeSlot() {
            grow()
            return lease
        }
        let id = nextID
        nextID += 1
        return try await withCheckedThrowingContinuation { continuation in
            let delay = max(.zero, ContinuousClock.now.duration(to: deadline))
            let timer = group.next().scheduleTask(in: TimeAmount(delay)) { [weak self] in
                guard let self else { return }
                Task { await self.expire(id) }
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

    /// The least-loaded usable connection with a free slot: fewest in flight, then fewest carried, then oldest.
    private func takeSlot() -> Lease? {
        var best: (id: Int, entry: Entry)?
        for (id, entry) in entries where entry.usable && entry.inFlight < capacity(entry) {
            if let current = best?.entry,
                (current.inFlight, current.carried, best!.id) <= (entry.inFlight, entry.carried, id)
            {
                continue
            }
            best = (id, entry)
        }
        guard let id = best?.id, var entry = best?.entry else { return nil }
        if entry.carried == 0 { statistics.increment(\.connectionsUsed) }
        entry.inFlight += 1
        entry.carried += 1
        entries[id] = entry
        statistics.recordPeak(entry.inFlight)
        return Lease(connection: entry.connection)
    }

    private func dispatch() {
        while !waiters.isEmpty, let lease = takeSlot() {
            let waiter = waiters.removeFirst()
            waiter.timer.cancel()
            waiter.continuation.resume(returning: lease)
        }
        grow()
    }

    /// Opens connections while there is load (requests waiting or in flight) and fewer than `maxConnections`
    /// usable ones. Until a connection has had a request succeed (the token is proven), one connection at a time;
    /// then all the missing ones at once (each still takes one stream until its own first request succeeds).
    private func grow() {
        guard !isShutDown else { return }
        var usable = 0
        var validated = false
        var busy = false
        for entry in entries.values where entry.usable {
            usable += 1
            validated = validated || entry.validated
            busy = busy || entry.inFlight > 0
        }
        guard busy || !waiters.isEmpty else { return }
        guard validated else {
            if usable == 0, connecting == 0 { openConnection() }
            return
        }
        if let until = growPausedUntil, ContinuousClock.now < until { return }
        while usable + connecting < maxConnections { openConnection() }
    }

    private func openConnection() {
        connecting += 1
        let id = nextID
        nextID += 1
        let endpoint = endpoint
        let sslContext = sslContext
        let group = group
        let timeout = connectTimeout
        let proxy = proxy
        let logger = logger
        Task {
            do {
                let connection = try await APNsConnection.connect(
                    id: id, endpoint: endpoint, sslContext: sslContext, group: group, timeout: timeout, proxy: proxy, logger: logger
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
        growPause = .seconds(1)
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
        if entries.values.contains(where: \.usable) {
            growPausedUntil = ContinuousClock.now.advanced(by: growPause)
            growPause = min(growPause * 2, .seconds(30))
        } else {
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
