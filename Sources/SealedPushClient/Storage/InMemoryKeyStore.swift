#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// A ``KeyStore`` in memory, for tests and previews. It stores the key ring in its file form, so loading goes
/// through the same validation as ``FileKeyStore``.
///
/// ``readOnlyView()`` returns a read-only store over the same storage (the extension's view of the app's keys), and
/// ``setAvailable(_:)`` simulates a device that has not been unlocked since boot.
public final class InMemoryKeyStore: KeyStore, @unchecked Sendable {
    private final class Storage: @unchecked Sendable {
        let lock = ClientLock()
        var bytes: [UInt8]?
        var available = true
    }

    private let storage: Storage

    /// Whether this store refuses every write.
    public let isReadOnly: Bool

    /// Creates an empty read-write store, optionally holding a key ring.
    ///
    /// - Parameter keyRing: An initial key ring, or nil.
    public convenience init(keyRing: DeviceKeyRing? = nil) {
        let storage = Storage()
        storage.bytes = keyRing?.fileBytes()
        self.init(storage: storage, isReadOnly: false)
    }

    private init(storage: Storage, isReadOnly: Bool) {
        self.storage = storage
        self.isReadOnly = isReadOnly
    }

    /// A read-only store sharing this store's contents.
    ///
    /// - Returns: A read-only view.
    public func readOnlyView() -> InMemoryKeyStore {
        InMemoryKeyStore(storage: storage, isReadOnly: true)
    }

    /// Makes the contents readable or not (simulating "before first unlock").
    ///
    /// - Parameter available: false makes every load and update fail with `keysUnavailable`.
    public func setAvailable(_ available: Bool) {
        storage.lock.withLock { storage.available = available }
    }

    /// Replaces the stored bytes verbatim (to simulate corruption in tests).
    ///
    /// - Parameter bytes: The new stored file bytes, or nil for "no key ring".
    public func replaceStoredBytes(_ bytes: [UInt8]?) {
        storage.lock.withLock { storage.bytes = bytes }
    }

    /// Loads the key ring.
    ///
    /// - Returns: The key ring, or nil when a read-write store has none.
    /// - Throws: `SealedPushError` with code `keysUnavailable` or `keyStoreCorrupt`.
    public func loadKeyRing() throws -> DeviceKeyRing? {
        try storage.lock.withLock { try loadLocked() }
    }

    /// Atomically reads, transforms and writes back the key ring.
    ///
    /// - Parameter body: Receives the current key ring (nil if none) and may replace it.
    /// - Returns: What `body` returns.
    /// - Throws: `SealedPushError` with code `invalidArgument` (read-only), `keysUnavailable`, `keyStoreCorrupt`,
    ///   or what `body` throws.
    public func update<T>(_ body: (inout DeviceKeyRing?) throws -> T) throws -> T {
        guard !isReadOnly else {
            throw SealedPushError(.invalidArgument, "the in-memory key store view is read-only")
        }
        return try storage.lock.withLock {
            let before = try loadLocked()
            var ring = before
            let result = try body(&ring)
            if let ring, ring.fingerprint != before?.fingerprint {
                storage.bytes = ring.fileBytes()
            } else if ring == nil, before != nil {
                throw SealedPushError(.invalidArgument, "a key ring cannot be deleted through update")
            }
            return result
        }
    }

    private func loadLocked() throws -> DeviceKeyRing? {
        guard storage.available else {
            throw SealedPushError(.keysUnavailable, "the in-memory key store is unavailable (simulated locked device)")
        }
        guard let bytes = storage.bytes else {
            if isReadOnly {
                throw SealedPushError(.keysUnavailable, "no key ring has been created")
            }
            return nil
        }
        return try DeviceKeyRing(fileBytes: bytes)
    }
}
