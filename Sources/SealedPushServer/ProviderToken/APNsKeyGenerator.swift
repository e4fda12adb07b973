internal import COpenSSL
import Foundation
import SealedPushCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes test APNs signing keys in Apple's `.p8` format (unencrypted PKCS#8 PEM, P-256) with OpenSSL.
///
/// Real keys come from Apple's developer portal; these are for the emulator, tests and demos.
public enum APNsKeyGenerator {
    /// Generates a new P-256 private key.
    /// - Returns: The `.p8` file's bytes (`-----BEGIN PRIVATE KEY-----` PEM). They are secret: zero them after use.
    /// - Throws: `SealedPushError` with code `.invalidKey` and OpenSSL's error queue if generation fails.
    public static func generatePEM() throws -> [UInt8] {
        _ = OpenSSLErrorQueue.drain()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw OpenSSLErrorQueue.error(.invalidKey, "EVP_PKEY_CTX_new_from_name(EC) failed")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "cannot set up P-256 key generation")
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else {
            throw OpenSSLErrorQueue.error(.invalidKey, "P-256 key generation failed")
        }
        defer { EVP_PKEY_free(key) }
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw OpenSSLErrorQueue.error(.invalidKey, "BIO_new failed")
        }
        defer { BIO_free(bio) }
        // PEM_write_bio_PrivateKey writes PKCS#8 ("PRIVATE KEY"), unencrypted when no cipher is given.
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "cannot encode the key as PKCS#8 PEM")
        }
        let pending = Int(BIO_ctrl_pending(bio))
        guard pending > 0, pending < 4096 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "unexpected PEM length \(pending)")
        }
        var pem = [UInt8](repeating: 0, count: pending)
        let read = pem.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(pending)) }
        guard Int(read) == pending else {
            for index in pem.indices { pem[index] = 0 }
            throw OpenSSLErrorQueue.error(.invalidKey, "cannot read the PEM back from OpenSSL")
        }
        return pem
    }

    /// Generates a key and writes it to `path` with mode 0600, atomically (temporary file in the same directory,
    /// fsync, rename). The in-memory copy is zeroed afterwards.
    /// - Parameters:
    ///   - path: Where to write the `.p8` file.
    ///   - overwrite: Whether an existing file may be replaced.
    /// - Throws: `SealedPushError` with code `.io` if the file exists (and `overwrite` is false) or cannot be
    ///   written, `.invalidKey` if generation fails.
    public static func writeNewKey(to path: String, overwrite: Bool = false) throws {
        var pem = try generatePEM()
        defer { for index in pem.indices { pem[index] = 0 } }
        try KeyFile.writeAtomically(pem, toPath: path, replacingExisting: overwrite)
    }
}
