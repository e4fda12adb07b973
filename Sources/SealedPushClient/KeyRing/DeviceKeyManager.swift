#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// The app-side key lifecycle over a read-write ``KeyStore``: create, rotate, prune, and the registration record.
///
/// Every operation is one locked read-modify-write of the store, so concurrent callers (the app and a CLI, two app
/// threads) cannot lose a key. The extension never uses this type: it reads through ``SealedPushReceiver``.
public struct DeviceKeyManager: Sendable {
    /// The store (must be read-write).
    public let store: any KeyStore
    /// How long retired keys are kept, in seconds (default ``DeviceKeyRing/defaultGracePeriod``, 30 days).
    public let gracePeriod: UInt64
    /// If set, registrations carry `expiresAt = createdAt + keyLifetime`.
    public let keyLifetime: UInt64?

    /// Creates a manager over a store.
    ///
    /// - Parameters:
    ///   - store: A read-write key store.
    ///   - gracePeriod: How long a retired key keeps opening envelopes, in seconds. Must be at least
    ///     `EnvelopeV1.maxLifetime` (28 days) unless the backend caps its TTL lower.
    ///   - keyLifetime: Optional planned key lifetime written into registrations as `expiresAt`.
    public init(
        store: any KeyStore,
        gracePeriod: UInt64 = DeviceKeyRing.defaultGracePeriod,
        keyLifetime: UInt64? = nil
    ) {
        self.store = store
        self.gracePeriod = gracePeriod
        self.keyLifetime = keyLifetime
    }

    /// Creates a manager over a read-write ``FileKeyStore`` in `directory`.
    ///
    /// - Parameters:
    ///   - directory: The key ring directory (created 0700 on first write).
    ///   - gracePeriod: How long a retired key is kept, in seconds.
    ///   - keyLifetime: Optional planned key lifetime for registrations.
    public init(
        directory: URL,
        gracePeriod: UInt64 = DeviceKeyRing.defaultGracePeriod,
        keyLifetime: UInt64? = nil
    ) {
        self.init(
            store: FileKeyStore(directory: directory, access: .readWrite),
            gracePeriod: gracePeriod,
            keyLifetime: keyLifetime
        )
    }

    /// Creates the key ring with one fresh key.
    ///
    /// - Parameter now: Creation time, UNIX seconds.
    /// - Returns: The registration to send to the backend.
    /// - Throws: `SealedPushError` with code `invalidArgument` if a key ring already exists (use ``rotate(now:)``) or
    ///   `now` is past 2^53 − 1,
    ///   `keyStoreCorrupt` if an existing file is invalid (it is never overwritten), `keysUnavailable` or `io`.
    @discardableResult
    public func create(now: UInt64) throws -> DeviceRegistration {
        try Self.checkWritable(now)
        return try store.update { ring in
            if let existing = ring {
                throw SealedPushError(
                    .invalidArgument,
                    "a key ring already exists (current key \(existing.current.keyID.hex)); rotate it instead"
                )
            }
            let fresh = DeviceKeyRing.generate(now: now)
            ring = fresh
            return fresh.registration(keyLifetime: keyLifetime)
        }
    }

    /// A key ring holds times 0 ... 2^53 − 1 (`Specs/keyring-v1.md` §2) and a reader refuses more, so a writer
    /// refuses to write one: a ring written at such a time could never be read again.
    private static func checkWritable(_ now: UInt64) throws {
        guard now < 1 << 53 else {
            throw SealedPushError(
                .invalidArgument,
                "the time \(now) (UNIX seconds) is past 2^53 − 1, the latest a key ring can hold; set the clock right")
        }
    }

    /// Returns the current registration, creating the key ring if none exists yet.
    ///
    /// - Parameter now: Creation time if a key ring has to be created, UNIX seconds.
    /// - Returns: The registration of the current key.
    /// - Throws: `SealedPushError` with code `invalidArgument` (`now` past 2^53 − 1), `keyStoreCorrupt` (an
    ///   invalid file is never replaced), `keysUnavailable` or `io`.
    public func createIfNeeded(now: UInt64) throws -> DeviceRegistration {
        try Self.checkWritable(now)
        return try store.update { ring in
            let value = ring ?? DeviceKeyRing.generate(now: now)
            ring = value
            return value.registration(keyLifetime: keyLifetime)
        }
    }

    /// Rotates: a new key becomes current and the previous one is retired at `now` (kept for the grace window).
    ///
    /// - Parameter now: Rotation time, UNIX seconds.
    /// - Returns: The registration of the new current key, to send to the backend.
    /// - Throws: `SealedPushError` with code `keysUnavailable` if no key ring exists, `invalidArgument` (`now` past
    ///   2^53 − 1), `keyStoreCorrupt` or `io`.
    @discardableResult
    public func rotate(now: UInt64) throws -> DeviceRegistration {
        try Self.checkWritable(now)
        return try store.update { ring in
            guard var value = ring else {
                throw SealedPushError(.keysUnavailable, "no key ring exists yet; create one first")
            }
            value.rotate(now: now)
            ring = value
            return value.registration(keyLifetime: keyLifetime)
        }
    }

    /// Removes retired keys whose grace window has passed (`retiredAt + gracePeriod <= now`).
    ///
    /// - Parameter now: The current time, UNIX seconds.
    /// - Returns: The ids of the removed keys.
    /// - Throws: `SealedPushError` with code `keysUnavailable` if no key ring exists, `keyStoreCorrupt` or `io`.
    @discardableResult
    public func prune(now: UInt64) throws -> [KeyID] {
        try store.update { ring in
            guard var value = ring else {
                throw SealedPushError(.keysUnavailable, "no key ring exists yet; create one first")
            }
            let removed = value.prune(now: now, gracePeriod: gracePeriod)
            ring = value
            return removed
        }
    }

    /// The registration of the current key.
    ///
    /// - Returns: The registration.
    /// - Throws: `SealedPushError` with code `keysUnavailable` if no key ring exists, `keyStoreCorrupt` or `io`.
    public func registration() throws -> DeviceRegistration {
        guard let ring = try store.loadKeyRing() else {
            throw SealedPushError(.keysUnavailable, "no key ring exists yet; create one first")
        }
        return ring.registration(keyLifetime: keyLifetime)
    }
}
