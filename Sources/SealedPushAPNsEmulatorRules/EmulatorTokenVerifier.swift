import Crypto
import Foundation
import SealedPushCore

/// Checks `authorization: bearer <jwt>` as APNs does: ES256 signature (swift-crypto P-256, an implementation
/// independent of the provider's OpenSSL), `kid` and `iss`, age (older than 60 minutes → ExpiredProviderToken),
/// and how often new tokens appear (a new token less than 20 minutes after the current one →
/// TooManyProviderTokenUpdates). Shared by all connections; thread-safe.
package final class EmulatorTokenVerifier: @unchecked Sendable {
    package enum Verdict: Equatable {
        case accepted
        case rejected(status: Int, reason: String)
    }

    static let maximumAge: TimeInterval = 3600
    static let minimumUpdateInterval: TimeInterval = 1200
    /// Tolerated clock skew for an `iat` in the future.
    static let futureSkew: TimeInterval = 300
    static let maximumTokenLength = 1024
    static let maximumRememberedTokens = 64

    private let publicKey: P256.Signing.PublicKey
    private let keyID: String
    private let teamID: String
    private let scope: TokenUpdateScope
    private let clock: @Sendable () -> Date
    private let lock = NSLock()
    /// Tokens with a verified signature and their `iat`.
    private var verified: [String: Int64] = [:]
    /// The key's current token (scope `.key`).
    private var keyCurrent = EmulatorTokenSession()

    package init(configuration: APNsEmulatorConfiguration) throws {
        self.publicKey = try Self.publicKey(fromPEM: configuration.authKeyPEM)
        self.keyID = configuration.keyID
        self.teamID = configuration.teamID
        self.scope = configuration.tokenUpdateScope
        self.clock = configuration.clock
    }

    static func publicKey(fromPEM pem: String) throws -> P256.Signing.PublicKey {
        if pem.contains("PUBLIC KEY") {
            do { return try P256.Signing.PublicKey(pemRepresentation: pem) } catch {
                throw SealedPushError(
                    .invalidKey, "APNs emulator: the auth key is not a P-256 public key PEM: \(error)")
            }
        }
        do { return try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey } catch {
            throw SealedPushError(.invalidKey, "APNs emulator: the auth key is not a P-256 .p8 (PKCS#8 PEM) key")
        }
    }

    /// Verifies `authorization` for a request on the connection whose token state is `session`.
    package func verify(authorization: String?, session: EmulatorTokenSession) -> Verdict {
        guard let authorization else { return .rejected(status: 403, reason: "MissingProviderToken") }
        let prefix = "bearer "
        guard authorization.utf8.count > prefix.utf8.count,
            authorization.utf8.count <= Self.maximumTokenLength + prefix.utf8.count,
            authorization.prefix(prefix.count).lowercased() == prefix
        else { return .rejected(status: 403, reason: "InvalidProviderToken") }
        let jwt = String(authorization.dropFirst(prefix.count))
        let now = Int64(clock().timeIntervalSince1970)

        let issuedAt: Int64
        if let known = lock.withLock({ verified[jwt] }) {
            issuedAt = known
        } else {
            guard let parsed = parse(jwt) else { return .rejected(status: 403, reason: "InvalidProviderToken") }
            issuedAt = parsed
            lock.withLock {
                if verified.count >= Self.maximumRememberedTokens { verified.removeAll() }
                verified[jwt] = issuedAt
            }
        }
        if Double(now - issuedAt) > Self.maximumAge { return .rejected(status: 403, reason: "ExpiredProviderToken") }
        if Double(issuedAt - now) > Self.futureSkew { return .rejected(status: 403, reason: "InvalidProviderToken") }

        switch scope {
        case .none:
            return .accepted
        case .connection:
            return session.present(jwt: jwt, issuedAt: issuedAt)
        case .key:
            return lock.withLock { keyCurrent.present(jwt: jwt, issuedAt: issuedAt) }
        }
    }

    /// Parses and verifies a JWT; returns its `iat`, or nil if anything is wrong.
    private func parse(_ jwt: String) -> Int64? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Self.base64URLDecode(parts[0]),
            let claimsBytes = Self.base64URLDecode(parts[1]),
            let signatureBytes = Self.base64URLDecode(parts[2]), signatureBytes.count == 64,
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any],
            header["alg"] as? String == "ES256", header["kid"] as? String == keyID,
            claims["iss"] as? String == teamID,
            let iatNumber = claims["iat"] as? NSNumber,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return nil }
        let iat = iatNumber.doubleValue
        guard iat.isFinite, iat >= 0, iat < 1e12, iat == iat.rounded() else { return nil }
        let signingInput = Data((parts[0] + "." + parts[1]).utf8)
        guard publicKey.isValidSignature(signature, for: signingInput) else { return nil }
        return Int64(iat)
    }

    /// Strict unpadded base64url.
    static func base64URLDecode(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty, text.count % 4 != 1,
            text.utf8.allSatisfy({ byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == 0x2D || byte == 0x5F
            })
        else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }
}

/// The token a connection (or, for scope `.key`, the key) currently uses. Not thread-safe: confined to one
/// connection's event loop, or guarded by the verifier's lock.
package final class EmulatorTokenSession: @unchecked Sendable {
    private var currentJWT: String?
    private var currentIssuedAt: Int64 = 0

    package init() {}

    /// Accepts the token in use, or a new one at least 20 minutes apart from it; answers 429 otherwise.
    package func present(jwt: String, issuedAt: Int64) -> EmulatorTokenVerifier.Verdict {
        if let currentJWT {
            if currentJWT == jwt { return .accepted }
            if abs(Double(issuedAt - currentIssuedAt)) < EmulatorTokenVerifier.minimumUpdateInterval {
                return .rejected(status: 429, reason: "TooManyProviderTokenUpdates")
            }
        }
        currentJWT = jwt
        currentIssuedAt = issuedAt
        return .accepted
    }
}
