import SealedPushCore

/// The backend's static X25519 key pair: the HPKE sender key `skS`/`pkS` that authenticates every envelope
/// (mode_auth). Devices pin its public key and find it by ``keyID``.
///
/// The private key lives in a buffer that is wiped (`sodium_memzero`) when the last copy of the identity is
/// released; it is never printed.
public struct ServerIdentity: Sendable, CustomStringConvertible {
    /// The private key, wiped on release.
    let privateKey: SecretBytes
    /// The 32-byte public key `X25519(sk, 9)`.
    public let publicKey: [UInt8]
    /// The key id of ``publicKey`` (spec §2.2).
    public let keyID: KeyID

    /// Generates a new identity from libsodium's secure random source.
    ///
    /// - Returns: The new identity.
    /// - Throws: `SealedPushError` with code `keysUnavailable` if libsodium cannot initialize.
    public static func generate() throws -> ServerIdentity {
        do {
            return try ServerIdentity(secret: X25519.generatePrivateKey())
        } catch let error as HPKEError {
            throw SealedPushError(hpke: error, context: "generating a server identity")
        }
    }

    /// Creates an identity from a raw 32-byte X25519 private key. The caller keeps ownership of (and should wipe)
    /// its own copy of `privateKey`.
    ///
    /// - Parameter privateKey: The 32-byte private key.
    /// - Throws: `SealedPushError` with code `invalidKey` if it is not 32 bytes.
    public init(privateKey: [UInt8]) throws {
        guard privateKey.count == X25519.keyLength else {
            throw SealedPushError(
                .invalidKey, "a server private key is \(X25519.keyLength) bytes, got \(privateKey.count)")
        }
        try self.init(secret: SecretBytes(copying: privateKey))
    }

    init(secret: SecretBytes) throws {
        let publicKey: [UInt8]
        do {
            publicKey = try X25519.publicKey(privateKey: secret)
        } catch let error as HPKEError {
            throw SealedPushError(hpke: error, context: "deriving the server public key")
        }
        self.privateKey = secret
        self.publicKey = publicKey
        self.keyID = try KeyID(derivingFrom: publicKey)
    }

    /// The public key in its text form `SPK1:…` (spec §7), as devices pin it.
    public var publicKeyText: String { KeyText.encodePublicKey(publicKey) }

    /// Names the key id only; the private key is never printed.
    public var description: String { "ServerIdentity(keyID: \(keyID.hex))" }
}
