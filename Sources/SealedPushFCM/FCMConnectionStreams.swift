import Synchronization

/// A connection's streams in flight and whether it is retired: the server sent GOAWAY, or a request reached its
/// deadline while the connection read nothing at all. A retired connection takes no new streams and closes after its
/// last one. The count is changed on the connection's event loop only; ``isRetired`` is read from anywhere.
final class FCMConnectionStreams: Sendable {
    private let retired = Atomic<Bool>(false)
    private let open = Atomic<Int>(0)

    /// No new streams on this connection.
    var isRetired: Bool { retired.load(ordering: .acquiring) }

    /// A request's stream is starting.
    func opened() { open.add(1, ordering: .relaxed) }

    /// A request's stream ended.
    /// - Returns: Whether the connection should now close (it is retired and this was its last stream).
    func ended() -> Bool {
        let left = open.subtract(1, ordering: .relaxed).newValue
        return left == 0 && isRetired
    }

    /// Retires the connection.
    /// - Returns: Whether it can close at once (no stream in flight).
    func retire() -> Bool {
        retired.store(true, ordering: .releasing)
        return open.load(ordering: .relaxed) == 0
    }
}
