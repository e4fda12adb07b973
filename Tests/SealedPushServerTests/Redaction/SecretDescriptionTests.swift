import Foundation
import SealedPushCore
import Testing

@testable import SealedPushServer

/// Review item 10: `print(providerToken)` showed the JWT, and `dump` of the token cache showed key material.
/// Every server type that holds a secret is rendered every way Swift renders a value; none may contain the secret.
@Suite struct SecretDescriptionTests {
    /// Every way a value reaches a log: `description`, interpolation, `debugDescription`, `dump`.
    static func renderings(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), "\(value)", String(reflecting: value), dumped]
    }

    static func expectNoSecret(_ value: Any, secrets: [String], _ what: String) {
        for rendering in renderings(value) {
            for secret in secrets where !secret.isEmpty {
                #expect(!rendering.contains(secret), "\(what) shows a secret in: \(rendering.prefix(300))")
            }
        }
    }

    @Test func providerTokenAndCacheShowNoJWT() throws {
        let pem = try APNsKeyGenerator.generatePEM()
        let key = try APNsSigningKey(pemBytes: pem)
        let issuer = try ProviderTokenIssuer(key: key, keyID: "ABCDE12345", teamID: "TEAM123456")
        let cache = try ProviderTokenCache(issuer: issuer)
        let token = try cache.token()
        let pemText = String(decoding: pem, as: UTF8.self)
        let pemBody = pemText.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
        let jwtParts = token.jwt.split(separator: ".").map(String.init)
        #expect(jwtParts.count == 3)
        let secrets = [token.jwt, token.authorizationHeader] + jwtParts.suffix(1) + pemBody
        Self.expectNoSecret(token, secrets: secrets, "ProviderToken")
        Self.expectNoSecret(cache, secrets: secrets, "ProviderTokenCache")
        Self.expectNoSecret(issuer, secrets: secrets, "ProviderTokenIssuer")
        Self.expectNoSecret(key, secrets: secrets, "APNsSigningKey")
        Self.expectNoSecret([token], secrets: secrets, "[ProviderToken]")
        // The ids an operator needs are still there.
        #expect(String(describing: cache).contains("ABCDE12345"))
        #expect(String(describing: token).contains("generation"))
    }

    @Test func identitiesAndSealersShowOnlyKeyIDs() throws {
        let privateKey = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }
        let identity = try ServerIdentity(privateKey: privateKey)
        let previous = try ServerIdentity.generate()
        let secrets = [
            Hex.encode(privateKey), Base64URL.encode(privateKey), String(describing: privateKey),
            String(decoding: KeyText.encodePrivateKeyFile(privateKey), as: UTF8.self).trimmingCharacters(in: .newlines),
        ]
        let sealer = try Sealer(identity: identity, topic: "com.example.app")
        // Fill the static DH cache so it holds shared secrets.
        _ = try sealer.seal(NotificationContent(body: "x"), to: DevicePublicKey(rawRepresentation: previous.publicKey))
        let ring = try IdentityRing(current: identity, previous: [previous], topic: "com.example.app")
        Self.expectNoSecret(identity, secrets: secrets, "ServerIdentity")
        Self.expectNoSecret(sealer, secrets: secrets, "Sealer")
        Self.expectNoSecret(ring, secrets: secrets, "IdentityRing")
        Self.expectNoSecret(identity.privateKey, secrets: secrets, "SecretBytes")
        #expect(String(describing: ring).contains(identity.keyID.hex))
        // The dump of a sealer shows no raw byte arrays at all (a cached DH value would be one).
        var dumped = ""
        dump(sealer, to: &dumped)
        #expect(!dumped.contains("UInt8"))
    }

    @Test func preparedContentShowsOnlyItsLength() throws {
        let sealer = try Sealer(identity: try ServerIdentity.generate(), topic: "com.example.app")
        let marker = "MARKER-prepared-7f3a"
        let prepared = try sealer.prepare(NotificationContent(title: marker, body: marker))
        Self.expectNoSecret(prepared, secrets: [marker, Base64URL.encode(Array(marker.utf8))], "PreparedContent")
        var dumped = ""
        dump(prepared, to: &dumped)
        #expect(!dumped.contains("UInt8"))  // no raw bytes of the padded plaintext
    }
}
