import Foundation
import SealedPushCore

/// A Google service account as its JSON key file describes it (`Specs/fcm-v1.md` §5), with its RS256 key loaded.
///
/// Its description names the account and the key id, never the key.
public struct FCMServiceAccount: Sendable, CustomStringConvertible {
    /// The OAuth scope FCM sends need.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// The largest file accepted (Google's are about 2.3 KB).
    public static let maximumFileLength = 64 * 1024

    /// `project_id`: the default FCM project.
    public let projectID: String
    /// `client_email`: the assertion's `iss`.
    public let clientEmail: String
    /// `private_key_id`: the assertion's `kid`.
    public let privateKeyID: String
    /// `token_uri`: where assertions are exchanged for access tokens (also the assertion's `aud`).
    public let tokenURI: String
    /// The signing key.
    public let signingKey: RS256SigningKey

    /// Parses the file's bytes.
    /// - Parameter json: The JSON text. The caller zeroes its copy afterwards.
    /// - Throws: `SealedPushError` with code `invalidKey` (missing or ill-typed member, unusable key) naming the member.
    public init(json: [UInt8]) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            throw SealedPushError(.invalidKey, "the service-account file is not a JSON object")
        }
        func member(_ name: String) throws -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw SealedPushError(.invalidKey, "the service-account file has no \(name) string")
            }
            return value
        }
        guard (object["type"] as? String) == "service_account" else {
            throw SealedPushError(.invalidKey, "the service-account file's type is not \"service_account\"")
        }
        projectID = try member("project_id")
        clientEmail = try member("client_email")
        privateKeyID = try member("private_key_id")
        tokenURI = try member("token_uri")
        guard let url = URL(string: tokenURI), url.scheme == "https", url.host != nil else {
            throw SealedPushError(.invalidKey, "the service-account file's token_uri is not an https URL")
        }
        var pem = Array(try member("private_key").utf8)
        defer { Sodium.wipe(&pem) }
        signingKey = try RS256SigningKey(pemBytes: pem)
    }

    /// Reads a service-account file: a regular file (no symbolic link) readable by its owner only.
    /// - Parameter path: The file.
    /// - Throws: `SealedPushError`: `io` (cannot read, not a regular file, a symbolic link, group or other
    ///   permission bits set: `chmod 600` it), `invalidKey` (content).
    public init(contentsOfFile path: String) throws {
        var content = try KeyFile.readPrivate(path: path, limit: Self.maximumFileLength, what: "the service-account file")
        defer { Sodium.wipe(&content) }
        try self.init(json: content)
    }

    /// The signed RS256 JWT assertion (RFC 7523) for the FCM scope.
    /// - Parameters:
    ///   - now: The issue time, UNIX seconds.
    ///   - lifetime: `exp − iat`, at most 3,600 seconds (default 3,600).
    /// - Returns: `b64url(header) "." b64url(claims) "." b64url(signature)`.
    /// - Throws: `SealedPushError` with code `invalidKey` if signing fails.
    public func assertion(now: Int64, lifetime: Int64 = 3600) throws -> String {
        var header = JSONWriter()
        header.raw("{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":")
        header.string(privateKeyID)
        header.raw("}")
        var claims = JSONWriter()
        claims.raw("{\"iss\":")
        claims.string(clientEmail)
        claims.raw(",\"scope\":")
        claims.string(Self.scope)
        claims.raw(",\"aud\":")
        claims.string(tokenURI)
        claims.raw(",\"iat\":")
        claims.number(Double(now))
        claims.raw(",\"exp\":")
        claims.number(Double(now + min(max(1, lifetime), 3600)))
        claims.raw("}")
        let signingInput = Base64URL.encode(header.bytes) + "." + Base64URL.encode(claims.bytes)
        let signature = try signingKey.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The account and key id only.
    public var description: String { "FCMServiceAccount(\(clientEmail), key \(privateKeyID), project \(projectID))" }

    /// Writes a new service-account file for tests and the emulator: a fresh 2048-bit key, mode 0600, atomically.
    /// - Parameters:
    ///   - path: Where to write it.
    ///   - projectID: `project_id`.
    ///   - tokenURI: `token_uri` (the emulator's token endpoint).
    ///   - clientEmail: `client_email` (default derived from the project).
    ///   - overwrite: Whether an existing file may be replaced.
    ///   - privateKeyPEM: The key to use (default a fresh 2048-bit one).
    /// - Returns: The public key PEM, for the emulator.
    /// - Throws: `SealedPushError` with code `io` or `invalidKey`.
    @discardableResult
    public static func writeTestAccount(
        to path: String, projectID: String, tokenURI: String, clientEmail: String? = nil, overwrite: Bool = false,
        privateKeyPEM: [UInt8]? = nil
    ) throws -> String {
        var pem = try privateKeyPEM ?? RSAKeyGenerator.generatePEM()
        defer { Sodium.wipe(&pem) }
        let key = try RS256SigningKey(pemBytes: pem)
        let object: [String: String] = [
            "type": "service_account", "project_id": projectID, "private_key_id": "emulator-key-1",
            "private_key": String(decoding: pem, as: UTF8.self),
            "client_email": clientEmail ?? "sealedpush@\(projectID).iam.gserviceaccount.com",
            "client_id": "100000000000000000001", "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
        ]
        var json = Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]))
        defer { Sodium.wipe(&json) }
        try KeyFile.writeAtomically(json, toPath: path, replacingExisting: overwrite)
        return try key.publicKeyPEM()
    }
}
