internal import COpenSSL
import SealedPushCore

/// An RSA private key used through OpenSSL to make RS256 signatures (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518
/// §3.3): the key of a Google service account, which signs the OAuth assertion for FCM (`Specs/fcm-v1.md` §5).
///
/// Immutable after loading; each signature uses a fresh OpenSSL context, so one instance may be shared.
public final class RS256SigningKey: @unchecked Sendable {
    /// The smallest modulus accepted, in bits (RFC 7518 §3.3 requires 2048).
    public static let minimumBits = 2048
    /// The largest PEM text accepted.
    public static let maximumPEMLength = 16 * 1024

    private let key: OpaquePointer  // EVP_PKEY*, owned

    /// Loads an unencrypted PEM RSA private key (PKCS #8 `BEGIN PRIVATE KEY` or PKCS #1 `BEGIN RSA PRIVATE KEY`).
    /// - Parameter pemBytes: The PEM text. The caller zeroes its copy afterwards; no copy of the text is kept.
    /// - Throws: `SealedPushError` with code `invalidKey` if it is not such a key or is shorter than 2048 bits.
    public init(pemBytes: [UInt8]) throws {
        guard pemBytes.count <= Self.maximumPEMLength else {
            throw SealedPushError(
                .invalidKey, "the RSA key is \(pemBytes.count) bytes, over the \(Self.maximumPEMLength)-byte limit")
        }
        _ = OpenSSLErrorQueue.drain()
        let loaded: OpaquePointer? = pemBytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)  // never prompt for a passphrase
        }
        guard let loaded else {
            throw OpenSSLErrorQueue.error(
                .invalidKey, "the service account's private_key is not an unencrypted PEM private key")
        }
        guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA else {
            EVP_PKEY_free(loaded)
            throw SealedPushError(.invalidKey, "the service account's private_key is not an RSA key; RS256 needs RSA")
        }
        let bits = Int(EVP_PKEY_get_bits(loaded))
        guard bits >= Self.minimumBits else {
            EVP_PKEY_free(loaded)
            throw SealedPushError(.invalidKey, "the RSA key has \(bits) bits; RS256 needs at least \(Self.minimumBits)")
        }
        self.key = loaded
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Signs with RSASSA-PKCS1-v1_5 / SHA-256.
    /// - Parameter message: The bytes to sign (for a JWT: `b64url(header) "." b64url(claims)`).
    /// - Returns: The signature (as long as the modulus).
    /// - Throws: `SealedPushError` with code `invalidKey` and OpenSSL's error queue if signing fails.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        _ = OpenSSLErrorQueue.drain()
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLErrorQueue.error(.invalidKey, "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "EVP_DigestSignInit failed for RS256")
        }
        var length = 0
        let sized = message.withUnsafeBufferPointer { EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }
        guard sized == 1, length > 0, length <= 2048 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "EVP_DigestSign could not size the RS256 signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = message.withUnsafeBufferPointer { input in
            signature.withUnsafeMutableBufferPointer { output in
                EVP_DigestSign(context, output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard signed == 1 else { throw OpenSSLErrorQueue.error(.invalidKey, "EVP_DigestSign failed for RS256") }
        return Array(signature.prefix(length))
    }

    /// The public half as a PEM `BEGIN PUBLIC KEY` (SubjectPublicKeyInfo), for a verifier.
    /// - Returns: The PEM text.
    /// - Throws: `SealedPushError` with code `invalidKey` if OpenSSL cannot encode it.
    public func publicKeyPEM() throws -> String {
        _ = OpenSSLErrorQueue.drain()
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLErrorQueue.error(.invalidKey, "BIO_new failed") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, key) == 1 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "cannot encode the RSA public key")
        }
        return String(decoding: RSAKeyGenerator.readAll(bio), as: UTF8.self)
    }
}

/// Checks RS256 signatures against an RSA public key (the emulator's view of a service account).
public final class RS256Verifier: @unchecked Sendable {
    private let key: OpaquePointer  // EVP_PKEY*, owned

    /// Loads a PEM public key (`BEGIN PUBLIC KEY`), or the public half of a PEM private key.
    /// - Parameter pem: The PEM text.
    /// - Throws: `SealedPushError` with code `invalidKey` if it is not an RSA key.
    public init(pem: String) throws {
        _ = OpenSSLErrorQueue.drain()
        let bytes = Array(pem.utf8)
        let isPrivate = pem.contains("PRIVATE KEY-----")
        let loaded: OpaquePointer? = bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return isPrivate
                ? PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
                : PEM_read_bio_PUBKEY(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let loaded else { throw OpenSSLErrorQueue.error(.invalidKey, "not a PEM RSA key") }
        guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA else {
            EVP_PKEY_free(loaded)
            throw SealedPushError(.invalidKey, "the key is not an RSA key")
        }
        self.key = loaded
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Whether `signature` is a valid RS256 signature of `message`.
    /// - Parameters:
    ///   - signature: The signature bytes.
    ///   - message: The signed bytes.
    /// - Returns: True if it verifies.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        defer { _ = OpenSSLErrorQueue.drain() }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, msg.baseAddress, msg.count) == 1
            }
        }
    }
}
