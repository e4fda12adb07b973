import Foundation

/// An APNs provider authentication token: an ES256 JWT with header `{"alg":"ES256","kid":KEY_ID}` and claims
/// `{"iss":TEAM_ID,"iat":SECONDS}`, sent as `authorization: bearer <jwt>`.
///
/// The JWT is a credential: never log it.
public struct ProviderToken: Sendable, Hashable {
    /// The compact JWT (`header.claims.signature`, base64url without padding).
    public let jwt: String
    /// The `iat` claim: when the token was issued.
    public let issuedAt: Date
    /// Increases by one each time a ``ProviderTokenCache`` issues a new token (0 for tokens made directly).
    public let generation: Int

    /// Creates a token value.
    /// - Parameters:
    ///   - jwt: The compact JWT.
    ///   - issuedAt: Its `iat`.
    ///   - generation: Its issue number in a cache.
    public init(jwt: String, issuedAt: Date, generation: Int = 0) {
        self.jwt = jwt
        self.issuedAt = issuedAt
        self.generation = generation
    }

    /// The `authorization` header value.
    public var authorizationHeader: String { "bearer " + jwt }
}
