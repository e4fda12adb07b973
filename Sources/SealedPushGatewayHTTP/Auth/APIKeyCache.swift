import Foundation
import SealedPushGateway

/// The stored API keys read in the last ``lifetime``, by public id, so a backend's stream of requests costs one store
/// read a second instead of one each (a read hop on SQLite, a round trip on PostgreSQL, for every send).
///
/// Only what the store holds is kept — the key's record with the SHA-256 of its text, never a presented secret —
/// and the presented key is still compared with that digest in constant time and its expiry checked on every
/// request. Unknown ids are never kept (a stream of made-up keys cannot fill the memory; each is read as before).
/// The price: a key revoked, or an app removed, on this node or another, is still accepted for up to ``lifetime``.
final class APIKeyCache: @unchecked Sendable {
    /// How long a key read from the store is used.
    static let lifetime: Duration = .seconds(1)
    /// Keys kept at most; past it the memory starts over.
    static let capacity = 10_000

    private struct Entry {
        let key: StoredAPIKey
        let readAt: ContinuousClock.Instant
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]

    /// The key with this public id read within ``lifetime``, if any.
    func key(id: String) -> StoredAPIKey? {
        let now = ContinuousClock.now
        return lock.withLock {
            guard let entry = entries[id], entry.readAt.duration(to: now) < Self.lifetime else { return nil }
            return entry.key
        }
    }

    /// Keeps a key just read from the store.
    func keep(_ key: StoredAPIKey, readAt: ContinuousClock.Instant) {
        lock.withLock {
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key.id] = Entry(key: key, readAt: readAt)
        }
    }
}
