import Foundation
import NIOCore

/// The open connections of a ``BlobServer``: bounds their number and lets ``BlobServer/stop()`` quiesce them.
final class ConnectionRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var channels: [ObjectIdentifier: any Channel] = [:]
    private var closed = false
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Admits a connection, or returns `false` when the server is full or stopping.
    func admit(_ channel: any Channel) -> Bool {
        lock.withLock {
            guard !closed, channels.count < limit else { return false }
            channels[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    /// Forgets a connection that ended.
    func remove(_ channel: any Channel) {
        _ = lock.withLock { channels.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// The number of open connections.
    var count: Int { lock.withLock { channels.count } }

    /// Stops admitting and returns the open connections.
    func close() -> [any Channel] {
        lock.withLock {
            closed = true
            return Array(channels.values)
        }
    }
}
