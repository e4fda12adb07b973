import SealedPushCore

/// Durable storage for a device key ring.
///
/// Two roles use a store: the app (read-write: creates, rotates, prunes) and the notification service extension
/// (read-only: loads, never creates, rotates or rewrites). A read-only store that cannot read keys reports
/// `keysUnavailable`; it never generates keys.
public protocol KeyStore: Sendable {
    /// Whether this store refuses every write.
    var isReadOnly: Bool { get }

    /// Loads the key ring.
    ///
    /// - Returns: The key ring, or nil when none has been created yet (read-write stores only).
    /// - Throws: `SealedPushError` with code `keysUnavailable` (read-only store: missing or unreadable),
    ///   `keyStoreCorrupt` (present but invalid) or `io`.
    func loadKeyRing() throws -> DeviceKeyRing?

    /// Atomically reads, transforms and writes back the key ring, excluding concurrent writers.
    ///
    /// - Parameter body: Receives the current key ring (nil if none) and may replace it; setting it to a new value
    ///   writes it, leaving it unchanged writes nothing.
    /// - Returns: What `body` returns.
    /// - Throws: `SealedPushError` with code `invalidArgument` for a read-only store, `keyStoreCorrupt`, `io`, or
    ///   what `body` throws (then nothing is written).
    func update<T>(_ body: (inout DeviceKeyRing?) throws -> T) throws -> T
}
