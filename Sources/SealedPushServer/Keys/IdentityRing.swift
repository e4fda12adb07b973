import Foundation
import SealedPushCore

/// The server identities a backend holds: the current one, which seals every new envelope, an optional staged
/// next one, and previous ones kept during a rotation's grace period.
///
/// Devices pin a set of server public keys and choose by the envelope's sender key id, so a rotation is:
/// 1. ``stage(_:)`` the next identity; ``pinnedPublicKeyTexts`` now lists it, so devices learn to pin it;
/// 2. once devices have it, ``rotate(keepingPrevious:)`` makes it current (the old current becomes previous);
/// 3. ``retire(keyID:)`` the old identity after every envelope it sealed has expired (28 days at most).
///
/// Thread-safe; a rotation swaps the sealer atomically, so concurrent seals use either the old or the new
/// identity, never a mix.
public final class IdentityRing: Sendable {
    private struct State {
        var sealer: Sealer
        var next: ServerIdentity?
        var previous: [ServerIdentity]

        /// Every identity held: current, staged, previous.
        var all: [ServerIdentity] { [sealer.identity] + (next.map { [$0] } ?? []) + previous }
    }

    private let state: LockedState<State>
    /// The topic every sealer of this ring uses.
    public let topic: String
    /// The placeholder every sealer of this ring uses.
    public let placeholder: Placeholder
    /// The cache capacity of each sealer.
    public let cacheCapacity: Int

    /// Creates a ring.
    ///
    /// - Parameters:
    ///   - current: The identity that seals.
    ///   - previous: Older identities still pinned by devices, newest first.
    ///   - topic: The APNs topic.
    ///   - placeholder: The placeholder alert.
    ///   - cacheCapacity: The static DH cache capacity of the sealer.
    /// - Throws: `SealedPushError` with code `invalidTopic`, or `invalidArgument` if two identities share a key id.
    public init(
        current: ServerIdentity, previous: [ServerIdentity] = [], topic: String,
        placeholder: Placeholder = .default, cacheCapacity: Int = Sealer.defaultCacheCapacity
    ) throws {
        let ids = [current.keyID] + previous.map(\.keyID)
        guard Set(ids).count == ids.count else {
            throw SealedPushError(.invalidArgument, "an identity ring cannot hold the same key id twice")
        }
        let sealer = try Sealer(
            identity: current, topic: topic, placeholder: placeholder, cacheCapacity: cacheCapacity)
        self.state = LockedState(State(sealer: sealer, next: nil, previous: previous))
        self.topic = topic
        self.placeholder = placeholder
        self.cacheCapacity = cacheCapacity
    }

    /// The identity that seals new envelopes.
    public var current: ServerIdentity { state.withLock { $0.sealer.identity } }

    /// The staged next identity, if any.
    public var next: ServerIdentity? { state.withLock { $0.next } }

    /// Previous identities, newest first.
    public var previous: [ServerIdentity] { state.withLock { $0.previous } }

    /// The sealer of the current identity.
    public var sealer: Sealer { state.withLock { $0.sealer } }

    /// The public keys (`SPK1:…`) devices should pin: the current one, the staged next one, then the previous ones.
    public var pinnedPublicKeyTexts: [String] {
        state.withLock { $0.all.map(\.publicKeyText) }
    }

    /// The identity with `keyID`: current, staged or previous.
    ///
    /// - Parameter keyID: A sender key id.
    /// - Returns: The identity, or `nil`.
    public func identity(for keyID: KeyID) -> ServerIdentity? {
        state.withLock { state in state.all.first { $0.keyID == keyID } }
    }

    /// Stages `identity` as the next one: it is pinned (listed in ``pinnedPublicKeyTexts``) but does not seal yet.
    /// Staging again replaces a staged identity that was never made current.
    ///
    /// - Parameter identity: The next identity.
    /// - Throws: `SealedPushError` with code `invalidArgument` if it is the current or a previous identity.
    public func stage(_ identity: ServerIdentity) throws {
        try state.withLock { state in
            let held = [state.sealer.identity] + state.previous
            guard !held.contains(where: { $0.keyID == identity.keyID }) else {
                throw SealedPushError(
                    .invalidArgument, "identity \(identity.keyID.hex) is already in the ring; stage a new key")
            }
            state.next = identity
        }
    }

    /// Makes the staged identity current; the old current identity becomes the newest previous one.
    ///
    /// - Parameter keepingPrevious: How many previous identities to keep (the oldest are dropped), or `nil` for all.
    /// - Throws: `SealedPushError` with code `invalidArgument` if no identity is staged.
    public func rotate(keepingPrevious: Int? = nil) throws {
        guard let staged = next else {
            throw SealedPushError(.invalidArgument, "no identity is staged; call stage(_:) first")
        }
        try rotate(to: staged, keepingPrevious: keepingPrevious)
    }

    /// Makes `newIdentity` current at once; the old current identity becomes the newest previous one. A staged
    /// identity stays staged unless it is `newIdentity`.
    ///
    /// - Parameters:
    ///   - newIdentity: The new identity; devices should already pin its public key (see ``stage(_:)``).
    ///   - keepingPrevious: How many previous identities to keep (the oldest are dropped), or `nil` for all.
    /// - Throws: `SealedPushError` with code `invalidArgument` if the ring already holds `newIdentity`'s key id.
    public func rotate(to newIdentity: ServerIdentity, keepingPrevious: Int? = nil) throws {
        let sealer = try Sealer(
            identity: newIdentity, topic: topic, placeholder: placeholder, cacheCapacity: cacheCapacity)
        try state.withLock { state in
            let held = [state.sealer.identity] + state.previous
            guard !held.contains(where: { $0.keyID == newIdentity.keyID }) else {
                throw SealedPushError(
                    .invalidArgument, "identity \(newIdentity.keyID.hex) is already in the ring; rotate to a new key")
            }
            if state.next?.keyID == newIdentity.keyID { state.next = nil }
            state.previous.insert(state.sealer.identity, at: 0)
            if let keepingPrevious, state.previous.count > max(0, keepingPrevious) {
                state.previous.removeLast(state.previous.count - max(0, keepingPrevious))
            }
            state.sealer = sealer
        }
    }

    /// Drops a previous identity (after every envelope it sealed has expired).
    ///
    /// - Parameter keyID: The key id of a previous identity.
    /// - Returns: `true` if it was held and removed; the current and staged identities are never removed.
    @discardableResult
    public func retire(keyID: KeyID) -> Bool {
        state.withLock { state in
            let before = state.previous.count
            state.previous.removeAll { $0.keyID == keyID }
            return state.previous.count != before
        }
    }

    /// Seals with the current identity; see ``Sealer/seal(_:to:ttl:now:)``.
    ///
    /// - Parameters:
    ///   - content: The notification content.
    ///   - device: The device public key.
    ///   - ttl: Seconds until expiry, 1 ... 2,419,200.
    ///   - now: The issue time in UNIX seconds.
    /// - Returns: The sealed notification.
    /// - Throws: `SealedPushError` as ``Sealer/seal(_:to:ttl:now:)``.
    public func seal(
        _ content: NotificationContent, to device: DevicePublicKey, ttl: UInt64 = EnvelopeV1.defaultTTL,
        now: UInt64 = Sealer.currentTime()
    ) throws -> SealedNotification {
        try sealer.seal(content, to: device, ttl: ttl, now: now)
    }
}
