import Synchronization

/// A connection's streams in flight and whether the server sent GOAWAY. The count is changed on the connection's
/// event loop only; ``isGoingAway`` is read from anywhere.
final class FCMConnectionStreams: Sendable {
    private let goingAway = Atomic<Bool>(false)
    private let open = Atomic<Int>(0)

    /// The server sent GOAWAY: no new streams on this connection.
    var isGoingAway: Bool { goingAway.load(ordering: .acquiring) }

    /// A request's stream is starting.
    func opened() { open.add(1, ordering: .relaxed) }

    /// A request's stream ended.
    /// - Returns: Whether the connection should now close (it is going away and this was its last stream).
    func ended() -> Bool {
        let left = open.subtract(1, ordering: .relaxed).newValue
        return left == 0 && isGoingAway
    }

    /// Records the server's GOAWAY.
    /// - Returns: Whether the connection can close at once (no stream in flight).
    func goAway() -> Bool {
        goingAway.store(true, ordering: .releasing)
        return open.load(ordering: .relaxed) == 0
    }
}
