internal import COpenSSL
import SealedPushCore

/// Makes RSA keys with OpenSSL for tests, demos and the FCM emulator's service accounts (real ones come from the
/// Google Cloud console).
public enum RSAKeyGenerator {
    /// Generates an RSA private key.
    /// - Parameter bits: The modulus size (default 2048).
    /// - Returns: The PKCS #8 PEM (`BEGIN PRIVATE KEY`). It is secret: zero it after use.
    /// - Throws: `SealedPushError` with code `invalidKey` if generation fails.
    public static func generatePEM(bits: Int = 2048) throws -> [UInt8] {
        _ = OpenSSLErrorQueue.drain()
        guard bits >= 1024, bits <= 8192 else {
            throw SealedPushError(.invalidArgument, "RSA key size must be 1024 ... 8192 bits, got \(bits)")
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw OpenSSLErrorQueue.error(.invalidKey, "EVP_PKEY_CTX_new_from_name(RSA) failed")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "cannot set up RSA key generation")
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else {
            throw OpenSSLErrorQueue.error(.invalidKey, "RSA key generation failed")
        }
        defer { EVP_PKEY_free(key) }
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLErrorQueue.error(.invalidKey, "BIO_new failed") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "cannot encode the RSA key as PKCS#8 PEM")
        }
        return readAll(bio)
    }

    /// Everything pending in a memory BIO.
    static func readAll(_ bio: OpaquePointer) -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(bio))
        guard pending > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: pending)
        let read = out.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(pending)) }
        return Array(out.prefix(max(0, Int(read))))
    }
}
