import Foundation
import SealedPushCore

/// The backend's record of one device's registered public keys (the server half of the device key lifecycle).
///
/// A device registers each new key it generates (on install and at every rotation). The record checks that the
/// registration's key id is the one computed from its public key and that its `createdAt` is not beyond the
/// server's clock plus ``maxClockSkew``, keeps the few most recently *arrived* keys, and ``currentKey(at:)`` picks
/// the last-arrived key that has not expired (`Specs/keyring-v1.md` §4). Arrival order, not the device's
/// `createdAt`, decides: a device whose clock was once wrong (a key "created" in 2036) cannot pin that key after it
/// rotates. Older keys stay only so an unexpired one can be used if the newest has expired.
public struct DeviceRecord: Sendable, Hashable {
    /// One registered key.
    public struct RegisteredKey: Sendable, Hashable {
        /// The device public key.
        public let publicKey: DevicePublicKey
        /// When the device created the key (UNIX seconds).
        public let createdAt: UInt64
        /// When the key stops being valid for sealing (UNIX seconds), if ever.
        public let expiresAt: UInt64?

        /// Whether the key may be sealed to at `now` (`now < expiresAt`, or no expiry).
        ///
        /// - Parameter now: UNIX seconds.
        /// - Returns: `true` if the key is usable.
        public func isValid(at now: UInt64) -> Bool {
            expiresAt.map { now < $0 } ?? true
        }
    }

    /// The default number of keys a record keeps.
    public static let defaultMaxKeys = 4
    /// How far a registration's `createdAt` may be ahead of the server's clock: 10 minutes.
    public static let maxClockSkew: UInt64 = 600

    /// The registered keys, last arrived first.
    public private(set) var keys: [RegisteredKey] = []
    /// The most keys kept; registering more drops the oldest.
    public let maxKeys: Int

    /// Creates an empty record.
    ///
    /// - Parameter maxKeys: The most keys kept (at least 1).
    public init(maxKeys: Int = DeviceRecord.defaultMaxKeys) {
        self.maxKeys = max(1, maxKeys)
    }

    /// Accepts a device's registration record (Core's `DeviceRegistration`, as the device sent it).
    ///
    /// - Parameters:
    ///   - registration: The registration.
    ///   - now: The server's current time, UNIX seconds (default: the system clock).
    /// - Returns: The registered key.
    /// - Throws: `SealedPushError` with code `invalidKey` if the key or key id is malformed or the key id does not
    ///   match the public key; `invalidArgument` for times before 1970, a `createdAt` more than ``maxClockSkew``
    ///   ahead of `now`, or an expiry not after creation.
    @discardableResult
    public mutating func register(_ registration: DeviceRegistration, now: UInt64 = DeviceRecord.systemNow()) throws
        -> RegisteredKey
    {
        try register(
            publicKeyText: registration.publicKey, keyIDHex: registration.keyId,
            createdAt: Self.unixSeconds(registration.createdAt, field: "createdAt"),
            expiresAt: registration.expiresAt.map { try Self.unixSeconds($0, field: "expiresAt") }, now: now)
    }

    /// Accepts a registration given as its fields.
    ///
    /// The accepted key becomes the current one: the registration that arrived last wins. Registering a key that is
    /// already present replaces its times and makes it current again.
    ///
    /// - Parameters:
    ///   - publicKeyText: The public key in the text form `SPK1:…`.
    ///   - keyIDHex: The key id the device states, 16 lowercase hex digits.
    ///   - createdAt: When the device created the key (UNIX seconds).
    ///   - expiresAt: When the key expires (UNIX seconds), if it does.
    ///   - now: The server's current time, UNIX seconds (default: the system clock).
    /// - Returns: The registered key.
    /// - Throws: `SealedPushError` with code `invalidKey` for a malformed key or key id, or a key id that does not
    ///   match the public key; `invalidArgument` if `createdAt` is more than ``maxClockSkew`` ahead of `now` or
    ///   `expiresAt` is not after `createdAt`.
    @discardableResult
    public mutating func register(
        publicKeyText: String, keyIDHex: String, createdAt: UInt64, expiresAt: UInt64?,
        now: UInt64 = DeviceRecord.systemNow()
    ) throws -> RegisteredKey {
        let publicKey = try DevicePublicKey(text: publicKeyText)
        let stated: KeyID
        do {
            stated = try KeyID(hex: keyIDHex)
        } catch let error as SealedPushError {
            throw SealedPushError(.invalidKey, "registration key id is malformed: \(error.message)")
        }
        guard stated == publicKey.keyID else {
            throw SealedPushError(
                .invalidKey,
                "registration states key id \(stated.hex) but its public key has key id \(publicKey.keyID.hex); "
                    + "rejecting the registration")
        }
        guard createdAt <= now || createdAt - now <= Self.maxClockSkew else {
            throw SealedPushError(
                .invalidArgument,
                "registration for key \(publicKey.keyID.hex) says it was created at \(createdAt) (UNIX seconds), "
                    + "\(createdAt - now) s ahead of the server clock (\(now)); the device clock is wrong, so the "
                    + "registration is refused (it would otherwise outrank every later key)")
        }
        if let expiresAt, expiresAt <= createdAt {
            throw SealedPushError(
                .invalidArgument,
                "registration for key \(publicKey.keyID.hex) expires (\(expiresAt)) before it is created "
                    + "(\(createdAt))")
        }
        let key = RegisteredKey(publicKey: publicKey, createdAt: createdAt, expiresAt: expiresAt)
        keys.removeAll { $0.publicKey == publicKey }
        keys.insert(key, at: 0)  // the registration that arrived last wins
        if keys.count > maxKeys { keys.removeLast(keys.count - maxKeys) }
        return key
    }

    /// The key to seal to at `now`: the newest registered key that has not expired.
    ///
    /// - Parameter now: UNIX seconds.
    /// - Returns: The device public key.
    /// - Throws: `SealedPushError` with code `unknownRecipientKey` if no registered key is valid at `now`.
    public func currentKey(at now: UInt64) throws -> DevicePublicKey {
        guard let key = keys.first(where: { $0.isValid(at: now) }) else {
            throw SealedPushError(
                .unknownRecipientKey,
                keys.isEmpty
                    ? "the device has no registered key"
                    : "all \(keys.count) registered device keys have expired at \(now); the device must register "
                        + "a new key")
        }
        return key.publicKey
    }

    /// The key to seal to at `date`; the same rule as the overload taking UNIX seconds.
    ///
    /// - Parameter date: The time at which key expiry is judged.
    /// - Returns: The device public key.
    /// - Throws: `SealedPushError` with code `unknownRecipientKey` if no registered key is valid then.
    public func currentKey(at date: Date) throws -> DevicePublicKey {
        try currentKey(at: Self.clampedSeconds(date))
    }

    /// Drops keys that have expired at `now`.
    ///
    /// - Parameter now: UNIX seconds.
    public mutating func removeExpired(at now: UInt64) {
        keys.removeAll { !$0.isValid(at: now) }
    }

    /// The system clock in whole UNIX seconds.
    ///
    /// - Returns: Seconds since 1970, 0 before it.
    public static func systemNow() -> UInt64 {
        clampedSeconds(Date())
    }

    /// Whole UNIX seconds of `date` (rounded down), or `invalidArgument` before 1970 or beyond `UInt64`.
    private static func unixSeconds(_ date: Date, field: String) throws -> UInt64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds >= 0, seconds < 18_000_000_000_000_000_000 else {
            throw SealedPushError(.invalidArgument, "registration \(field) (\(date)) is before 1970 or out of range")
        }
        return UInt64(seconds)
    }

    /// Whole UNIX seconds of `date`, clamped to `0 ... UInt64.max` (never traps).
    private static func clampedSeconds(_ date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds > 0 else { return 0 }  // also NaN
        guard seconds < 18_000_000_000_000_000_000 else { return UInt64.max }
        return UInt64(seconds)
    }
}
