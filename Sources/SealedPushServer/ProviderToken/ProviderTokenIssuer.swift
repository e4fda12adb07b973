import Foundation
import SealedPushCore

/// Makes APNs provider tokens (ES256 JWTs) for one key id and team id.
public struct ProviderTokenIssuer: Sendable {
    /// Apple's key ids and team ids are 10 characters.
    public static let identifierLength = 10

    /// The signing key from the `.p8` file.
    public let key: APNsSigningKey
    /// The 10-character key id (`kid`).
    public let keyID: String
    /// The 10-character team id (`iss`).
    public let teamID: String

    /// Creates an issuer.
    /// - Parameters:
    ///   - key: The signing key.
    ///   - keyID: The key id shown next to the key in Apple's portal: 10 characters `A-Z0-9`.
    ///   - teamID: The team id: 10 characters `A-Z0-9`.
    /// - Throws: `SealedPushError` with code `.invalidArgument` if an id is malformed.
    public init(key: APNsSigningKey, keyID: String, teamID: String) throws {
        try Self.checkIdentifier(keyID, name: "key id")
        try Self.checkIdentifier(teamID, name: "team id")
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Signs a token issued at `issuedAt`.
    /// - Parameters:
    ///   - issuedAt: The `iat` claim (whole seconds are used).
    ///   - generation: The issue number to record in the token value.
    /// - Returns: The token.
    /// - Throws: `SealedPushError` with code `.invalidArgument` for a time before 1970, `.invalidKey` if
    ///   signing fails.
    public func makeToken(issuedAt: Date, generation: Int = 0) throws -> ProviderToken {
        let seconds = issuedAt.timeIntervalSince1970.rounded(.down)
        guard seconds >= 0, seconds < 1e12 else {
            throw SealedPushError(.invalidArgument, "token issue time \(issuedAt) is out of range")
        }
        let iat = Int64(seconds)
        // Identifiers are checked to be A-Z0-9, so no JSON escaping is needed.
        let header = #"{"alg":"ES256","kid":"\#(keyID)"}"#
        let claims = #"{"iss":"\#(teamID)","iat":\#(iat)}"#
        let signingInput = Self.base64URL(Array(header.utf8)) + "." + Self.base64URL(Array(claims.utf8))
        let signature = try key.sign(Array(signingInput.utf8))
        return ProviderToken(
            jwt: signingInput + "." + Self.base64URL(signature),
            issuedAt: Date(timeIntervalSince1970: TimeInterval(iat)),
            generation: generation
        )
    }

    private static func checkIdentifier(_ value: String, name: String) throws {
        let valid =
            value.utf8.count == identifierLength
            && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
        guard valid else {
            throw SealedPushError(
                .invalidArgument,
                "the \(name) must be \(identifierLength) characters A-Z or 0-9 (got \(value.utf8.count))")
        }
    }

    /// Unpadded base64url (RFC 4648 §5).
    static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
