import Foundation
import SealedPushCore

/// The one provider token shared by every connection of a client, renewed inside Apple's window.
///
/// Apple rejects a token older than 60 minutes (`403 ExpiredProviderToken`) and one minted less than 20 minutes
/// after the previous one (`429 TooManyProviderTokenUpdates`). The cache renews when the token reaches
/// `renewalAge` (default 50 minutes) and never issues a new token while the current one is younger than
/// `minimumAge` (20 minutes), even when asked to (``invalidate(_:)``).
///
/// The clock is injectable so the policy can be tested without waiting.
public final class ProviderTokenCache: @unchecked Sendable {
    /// Apple's lower bound between two tokens.
    public static let minimumAge: TimeInterval = 20 * 60
    /// Apple's upper bound on a token's age.
    public static let maximumAge: TimeInterval = 60 * 60
    /// The default renewal age: 50 minutes, leaving 10 minutes of margin for clock skew and slow requests.
    public static let defaultRenewalAge: TimeInterval = 50 * 60

    /// The issuer that signs new tokens.
    public let issuer: ProviderTokenIssuer
    /// The age at which the token is renewed.
    public let renewalAge: TimeInterval

    private let clock: @Sendable () -> Date
    private let lock = NSLock()
    private var current: ProviderToken?
    private var renewalRequested = false
    private var generationCounter = 0

    /// Creates a cache.
    /// - Parameters:
    ///   - issuer: Signs new tokens.
    ///   - renewalAge: When to renew; must be at least 20 minutes and less than 60 (default 50).
    ///   - clock: The current time (injectable for tests; default `Date()`).
    /// - Throws: `SealedPushError` with code `.invalidArgument` if `renewalAge` is outside [20, 60) minutes.
    public init(
        issuer: ProviderTokenIssuer,
        renewalAge: TimeInterval = ProviderTokenCache.defaultRenewalAge,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        guard renewalAge >= Self.minimumAge, renewalAge < Self.maximumAge else {
            throw SealedPushError(
                .invalidArgument,
                "token renewal age \(Int(renewalAge)) s is outside Apple's window [1200, 3600) s")
        }
        self.issuer = issuer
        self.renewalAge = renewalAge
        self.clock = clock
    }

    /// The token to use now: the current one, or a new one when it reached `renewalAge`, when a renewal was
    /// requested and it is at least 20 minutes old, or when the clock went backwards past its `iat`.
    /// - Returns: The token to send.
    /// - Throws: `SealedPushError` if signing fails.
    public func token() throws -> ProviderToken {
        lock.lock()
        defer { lock.unlock() }
        let now = clock()
        if let current {
            let age = now.timeIntervalSince(current.issuedAt)
            let wantRenewal = age >= renewalAge || (renewalRequested && age >= Self.minimumAge)
            if !wantRenewal && age >= -60 { return current }
        }
        generationCounter += 1
        let fresh = try issuer.makeToken(issuedAt: now, generation: generationCounter)
        current = fresh
        renewalRequested = false
        return fresh
    }

    /// Asks for a new token because Apple rejected `token` as expired. The renewal happens at the next
    /// ``token()`` call only if the current token is at least 20 minutes old; a younger one is kept.
    /// - Parameter token: The token that was rejected (ignored if it is no longer current).
    public func invalidate(_ token: ProviderToken) {
        lock.lock()
        defer { lock.unlock() }
        if current?.generation == token.generation { renewalRequested = true }
    }
}
