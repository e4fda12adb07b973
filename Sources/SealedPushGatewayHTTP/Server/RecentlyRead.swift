import Foundation

/// Store records read in the last ``lifetime``, by id, so a backend's stream of requests costs one store read a
/// second per record instead of one each (a read hop on SQLite, a round trip on PostgreSQL, for every send). The API
/// keys of ``BearerAuthenticator``, the apps and devices of ``NotificationFanOut`` are kept this way (a second), and
/// the receipt senders of ``ReceiptIntake`` (30 s).
///
/// Only what the store returned is kept, and only records that exist (ids that find nothing are read every time, so
/// a stream of made-up ids cannot fill the memory). The price: a record changed or removed in the store, by this
/// node or another, is still used for up to ``lifetime``.
final class RecentlyRead<Record: Sendable>: @unchecked Sendable {
    /// How long a record read from the store is used.
    let lifetime: Duration
    /// Records kept at most; past it the memory starts over.
    let capacity: Int

    private struct Entry {
        let record: Record
        let readAt: ContinuousClock.Instant
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]

    init(lifetime: Duration = .seconds(1), capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The record with this id read within ``lifetime``, if any.
    private func record(id: String) -> Record? {
        let now = ContinuousClock.now
        return lock.withLock {
            guard let entry = entries[id], entry.readAt.duration(to: now) < lifetime else { return nil }
            return entry.record
        }
    }

    /// Keeps a record just read from the store.
    /// - Parameters:
    ///   - record: The record.
    ///   - id: Its id.
    ///   - readAt: When the read began (its age counts from there).
    private func keep(_ record: Record, id: String, readAt: ContinuousClock.Instant) {
        lock.withLock {
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[id] = Entry(record: record, readAt: readAt)
        }
    }

    /// The records kept for these ids (read within ``lifetime``); ids with none kept are left out.
    func kept(ids: [String]) -> [String: Record] {
        let now = ContinuousClock.now
        return lock.withLock {
            var found: [String: Record] = [:]
            for id in ids {
                if let entry = entries[id], entry.readAt.duration(to: now) < lifetime { found[id] = entry.record }
            }
            return found
        }
    }

    /// Keeps records read together from the store (none when they are more than ``capacity``).
    /// - Parameters:
    ///   - records: The records by id.
    ///   - readAt: When the read began (their age counts from there).
    func keep(_ records: [String: Record], readAt: ContinuousClock.Instant) {
        guard records.count <= capacity else { return }
        lock.withLock {
            if entries.count + records.count > capacity { entries.removeAll(keepingCapacity: true) }
            for (id, record) in records { entries[id] = Entry(record: record, readAt: readAt) }
        }
    }

    /// Drops the record kept for this id (this node changed it in the store).
    func forget(id: String) {
        _ = lock.withLock { entries.removeValue(forKey: id) }
    }

    /// The record with this id: kept, or read by `read` (and kept when it exists).
    /// - Parameters:
    ///   - id: The record's id.
    ///   - refresh: Read it even if one is kept (a kept record that turned out stale); a read that finds nothing
    ///     leaves the kept one.
    ///   - read: Reads it from the store.
    func record(id: String, refresh: Bool = false, read: () async throws -> Record?) async throws -> Record? {
        if !refresh, let kept = record(id: id) { return kept }
        let readAt = ContinuousClock.now
        guard let fresh = try await read() else { return nil }
        keep(fresh, id: id, readAt: readAt)
        return fresh
    }
}
