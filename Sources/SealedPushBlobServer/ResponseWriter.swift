import NIOCore
import NIOHTTP1

/// Writes one connection's responses straight to its channel with at most ``window`` writes outstanding.
///
/// Each write's future completes when its bytes have gone into the socket, and ``write(_:)`` waits for the oldest
/// once more than ``window`` are outstanding. So a client that reads slowly (or stops) holds the server back
/// instead of making it queue the rest of the blob in memory, and ``drain()`` tells when a response has really left
/// the process — after which the connection can be closed without cutting the body short.
///
/// (`NIOAsyncChannel`'s writer is not used for this: its writes return before they reach the channel, and a fast
/// producer ran megabytes past the channel's high-water mark before writability turned off.)
struct ResponseWriter {
    /// The channel written to.
    let channel: any Channel
    /// The most writes outstanding (each at most one chunk).
    let window: Int
    private var outstanding: CircularBuffer<EventLoopFuture<Void>>

    init(channel: any Channel, window: Int) {
        self.channel = channel
        self.window = max(1, window)
        self.outstanding = CircularBuffer(initialCapacity: self.window + 1)
    }

    /// Writes and flushes `part`; waits while more than ``window`` writes are outstanding.
    /// - Throws: The channel's error when a write fails (the connection closed or timed out).
    mutating func write(_ part: HTTPServerResponsePart) async throws {
        outstanding.append(channel.writeAndFlush(part))
        if outstanding.count > window { try await outstanding.removeFirst().get() }
    }

    /// Waits until every write so far is in the socket.
    /// - Throws: The first failed write's error.
    mutating func drain() async throws {
        while let future = outstanding.popFirst() { try await future.get() }
    }
}
