import Foundation
import SealedPushGateway
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A PostgreSQL server that does not answer (it accepts TCP connections and never says a word: a hung or
/// partitioned server): every `PostgresGatewayStore` call ends by its deadline, or at once when cancelled, instead
/// of waiting for the pool, which keeps trying to connect for a minute before failing anything.
///
/// Needs no PostgreSQL: the silent server is a listening socket on loopback that never accepts.
@Suite("PostgreSQL store call deadlines", .serialized)
struct PostgresStoreDeadlineTests {
    @Test func callsEndByTheirDeadlineWhenTheServerDoesNotAnswer() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let store = try PostgresGatewayStore(
            url: "postgres://postgres@127.0.0.1:\(server.port)/sealedpush", callDeadline: .seconds(1))
        let clock = ContinuousClock()
        let started = clock.now
        let outcome = try await Self.outcome(within: .seconds(20)) { try await store.ping() }
        let took = started.duration(to: clock.now)
        let error = try #require(outcome, "ping() was still waiting after 20 s")
        #expect((error as? GatewayStoreError)?.code == .database, "\(String(describing: error))")
        #expect(took < .seconds(5), "ping() took \(took) with a 1 s deadline")
        // A second call is bounded the same way (the pool is still failing to connect).
        let again = try await Self.outcome(within: .seconds(20)) { _ = try await store.queueDepth() }
        #expect((try #require(again) as? GatewayStoreError)?.code == .database)
        try await store.close()
    }

    /// Regression: `migrate()` (what `serve` and every operator command run first) waited out its 15-minute
    /// deadline while the pool retried a server that refused every connection, only logging why.
    @Test func migrateOnARefusingServerFailsAtOnceNamingTheServerAndTheCause() async throws {
        let closed = try SilentServer()
        let port = closed.port
        closed.close()  // nothing listens there now: connections are refused
        let store = try PostgresGatewayStore(url: "postgres://postgres@127.0.0.1:\(port)/sealedpush")
        let outcome = try await Self.outcome(within: .seconds(30)) { _ = try await store.migrate() }
        let error = try #require(outcome, "migrate() was still waiting after 30 s") as? GatewayStoreError
        #expect(error?.code == .database)
        #expect(error?.message.hasPrefix("cannot connect to PostgreSQL at 127.0.0.1:\(port) (database sealedpush, user postgres): ") == true,
                "\(String(describing: error))")
        #expect(error?.message.lowercased().contains("refused") == true, "\(String(describing: error))")
        try await store.close()
    }

    /// A server that accepts TCP and never answers holds `migrate()` only for the call deadline.
    @Test func migrateOnASilentServerEndsByTheCallDeadline() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let store = try PostgresGatewayStore(
            url: "postgres://postgres@127.0.0.1:\(server.port)/sealedpush", callDeadline: .seconds(1))
        let outcome = try await Self.outcome(within: .seconds(30)) { _ = try await store.migrate() }
        let error = try #require(outcome, "migrate() was still waiting after 30 s") as? GatewayStoreError
        #expect(error?.code == .database)
        #expect(error?.message.contains("127.0.0.1:\(server.port)") == true, "\(String(describing: error))")
        try await store.close()
    }

    @Test func cancelledCallsReturnAtOnce() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let store = try PostgresGatewayStore(
            url: "postgres://postgres@127.0.0.1:\(server.port)/sealedpush", callDeadline: .seconds(120))
        let clock = ContinuousClock()
        let finished = Flag()
        let call = Task {
            defer { finished.set() }
            _ = try await store.claim(owner: "n", limit: 4, leaseDuration: .seconds(30), now: Date())
        }
        try await Task.sleep(for: .milliseconds(300))
        let cancelledAt = clock.now
        call.cancel()
        while !finished.isSet && cancelledAt.duration(to: clock.now) < .seconds(20) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let took = cancelledAt.duration(to: clock.now)
        #expect(finished.isSet, "claim() still waiting 20 s after its task was cancelled")
        #expect(took < .seconds(2), "claim() took \(took) to return after cancellation")
        if finished.isSet {
            await #expect(throws: (any Error).self) { try await call.value }
        }
        try await store.close()
    }

    /// Runs `body` in a task of its own and waits at most `limit` for it (polling, so a call that ignores
    /// cancellation cannot hang the test). Returns the error it threw, or nil when it is still running.
    private static func outcome(
        within limit: Duration, _ body: @escaping @Sendable () async throws -> Void
    ) async throws -> (any Error)? {
        let result = ErrorBox()
        let task = Task {
            do {
                try await body()
                result.set(TestError("the call succeeded against a silent server"))
            } catch { result.set(error) }
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while result.value == nil && clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if result.value == nil { task.cancel() }
        return result.value
    }
}

/// A TCP listener on 127.0.0.1 that never accepts: the kernel completes the handshakes, nobody ever answers.
private final class SilentServer: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestError("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            closeDescriptor(fd)
            throw TestError("bind/listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { closeDescriptor(descriptor) }
}

private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #else
    _ = Darwin.close(descriptor)
    #endif
}

private final class ErrorBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Error)?
    var value: (any Error)? { lock.withLock { stored } }
    func set(_ error: any Error) { lock.withLock { stored = error } }
}

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var raised = false
    var isSet: Bool { lock.withLock { raised } }
    func set() { lock.withLock { raised = true } }
}

private struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
