import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// A device's X25519 key ring: one current key and the retired keys still inside their grace window.
///
/// The backend seals to the current key (the one in the latest ``DeviceRegistration``). After ``rotate(now:)``
/// the previous key is kept, marked with its retirement time, so envelopes already sealed to it — or sealed before the
/// backend learnt the new registration — still open. ``prune(now:gracePeriod:)`` drops retired keys whose grace window
/// has passed. The file form is specified in `Specs/keyring-v1.md`.
public struct DeviceKeyRing: Sendable {
    /// One device key.
    public struct Key: Sendable {
        /// The key id (spec §2.2) of ``publicKey``.
        public let keyID: KeyID
        /// The raw 32-byte X25519 public key.
        public let publicKey: [UInt8]
        /// When the key was generated, UNIX seconds.
        public let createdAt: UInt64
        /// When a rotation retired the key, UNIX seconds; nil for the current key.
        public let retiredAt: UInt64?
        let privateKey: Curve25519.KeyAgreement.PrivateKey

        /// The public key in the spec's text form (`SPK1:…`).
        public var publicKeyText: String { KeyText.encodePublicKey(publicKey) }

        init(privateKey: Curve25519.KeyAgreement.PrivateKey, createdAt: UInt64, retiredAt: UInt64?) throws {
            self.privateKey = privateKey
            self.publicKey = Array(privateKey.publicKey.rawRepresentation)
            self.keyID = try KeyID.derived(fromPublicKey: publicKey)
            self.createdAt = createdAt
            self.retiredAt = retiredAt
        }

        func retired(at time: UInt64) -> Key {
            // The key material is unchanged, so the id derivation cannot fail here.
            Key(copying: self, retiredAt: time)
        }

        private init(copying key: Key, retiredAt: UInt64) {
            self.keyID = key.keyID
            self.publicKey = key.publicKey
            self.createdAt = key.createdAt
            self.retiredAt = retiredAt
            self.privateKey = key.privateKey
        }
    }

    /// The default grace window for retired keys: 30 days (2,592,000 s).
    ///
    /// An envelope lives at most 28 days (`EnvelopeV1.maxLifetime`), and while the device is offline APNs keeps the
    /// last notification until its `apns-expiration`, so an envelope sealed to the old key just before the backend
    /// learns the new registration can arrive up to 28 days later. The extra 2 days cover the time it takes the new
    /// registration to reach the backend. A shorter window is safe only if the backend's TTL is capped lower.
    public static let defaultGracePeriod: UInt64 = 2_592_000

    /// All keys, oldest first; the last one is the current key.
    public private(set) var keys: [Key]

    /// The current key: the one the backend should seal to.
    public var current: Key {
        // Invariant (checked by every initializer): `keys` is non-empty.
        keys[keys.count - 1]
    }

    /// Generates a key ring holding one fresh key from the system's secure random source.
    ///
    /// - Parameter now: The creation time, UNIX seconds.
    /// - Returns: A new key ring.
    public static func generate(now: UInt64) -> DeviceKeyRing {
        DeviceKeyRing(keys: [freshKey(now: now, avoiding: [])])
    }

    init(keys: [Key]) {
        self.keys = keys
    }

    /// Looks a key up by the id an envelope names.
    ///
    /// - Parameter keyID: The envelope's `recipientKeyId`.
    /// - Returns: The key, or nil if this ring does not hold it.
    public func key(for keyID: KeyID) -> Key? {
        keys.first { $0.keyID == keyID }
    }

    /// Generates a new current key and retires the previous current key at `now`.
    ///
    /// If the ring would then no longer fit the file limit (``maxFileBytes``), the oldest retired keys are dropped
    /// first (`Specs/keyring-v1.md` §2.2): a writer never produces a ring its readers refuse.
    ///
    /// - Parameter now: The rotation time, UNIX seconds (the old key's retirement time).
    /// - Returns: The new current key.
    @discardableResult
    public mutating func rotate(now: UInt64) -> Key {
        let fresh = Self.freshKey(now: now, avoiding: Set(keys.map(\.keyID)))
        keys[keys.count - 1] = current.retired(at: now)
        keys.append(fresh)
        trimToFileLimit()
        return fresh
    }

    /// Drops the oldest retired keys until ``fileBytes()`` fits ``maxFileBytes`` (`Specs/keyring-v1.md` §2.2),
    /// so a writer never produces a file its readers refuse. The current key is never dropped.
    ///
    /// - Returns: The ids of the dropped keys, oldest first (empty when the ring already fits).
    @discardableResult
    public mutating func trimToFileLimit() -> [KeyID] {
        var sizes = keys.enumerated().map { index, key in
            var entry: [UInt8] = []
            Self.appendEntry(key, last: index == keys.count - 1, to: &entry)
            defer { EnvelopeOpener.wipe(&entry) }
            return entry.count
        }
        var total = Self.fileHead.count + Self.fileTail.count + sizes.reduce(0, +)
        var dropped: [KeyID] = []
        while total > Self.maxFileBytes, keys.count > 1 {
            total -= sizes.removeFirst()
            dropped.append(keys.removeFirst().keyID)
        }
        return dropped
    }

    /// Removes retired keys whose grace window has passed (`retiredAt + gracePeriod <= now`). The current key is
    /// never removed.
    ///
    /// - Parameters:
    ///   - now: The current time, UNIX seconds.
    ///   - gracePeriod: How long a retired key is kept, in seconds.
    /// - Returns: The ids of the removed keys.
    @discardableResult
    public mutating func prune(now: UInt64, gracePeriod: UInt64 = DeviceKeyRing.defaultGracePeriod) -> [KeyID] {
        var removed: [KeyID] = []
        keys = keys.filter { key in
            guard let retiredAt = key.retiredAt else { return true }
            let (end, overflow) = retiredAt.addingReportingOverflow(gracePeriod)
            if !overflow && end <= now {
                removed.append(key.keyID)
                return false
            }
            return true
        }
        return removed
    }

    /// The registration record the backend needs for the current key (Core's ``DeviceRegistration``, JSON in
    /// `Specs/keyring-v1.md` §4).
    ///
    /// - Parameter keyLifetime: If set, `expiresAt = createdAt + keyLifetime` tells the backend when to stop sealing
    ///   to this key (the app should rotate before then); nil for no expiry.
    /// - Returns: The registration of the current key.
    public func registration(keyLifetime: UInt64? = nil) -> DeviceRegistration {
        let key = current
        let expiresAt = keyLifetime.map { lifetime in
            let (sum, overflow) = key.createdAt.addingReportingOverflow(lifetime)
            return Date(timeIntervalSince1970: TimeInterval(overflow ? UInt64.max : sum))
        }
        return DeviceRegistration(
            publicKey: key.publicKeyText,
            keyId: key.keyID.hex,
            createdAt: Date(timeIntervalSince1970: TimeInterval(key.createdAt)),
            expiresAt: expiresAt
        )
    }

    private static func freshKey(now: UInt64, avoiding ids: Set<KeyID>) -> Key {
        while true {
            // Key ids are 64-bit; a collision with a held key is practically impossible but costs nothing to avoid.
            if let key = try? Key(privateKey: Curve25519.KeyAgreement.PrivateKey(), createdAt: now, retiredAt: nil),
                !ids.contains(key.keyID)
            {
                return key
            }
        }
    }
}
