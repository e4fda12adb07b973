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
        try writeSecretFile(pem, to: path, overwrite: overwrite)
    }

    /// Writes secret bytes to `path` with mode 0600 atomically: temporary file in the same directory, fsync,
    /// rename, fsync of the directory.
    /// - Parameters:
    ///   - bytes: The file content.
    ///   - path: The destination.
    ///   - overwrite: Whether an existing file may be replaced.
    /// - Throws: `SealedPushError` with code `.io`.
    static func writeSecretFile(_ bytes: [UInt8], to path: String, overwrite: Bool) throws {
        if !overwrite, access(path, F_OK) == 0 {
            throw SealedPushError(.io, "\(path) already exists; refusing to overwrite a key file")
        }
        let directory = (path as NSString).deletingLastPathComponent
        let base = (path as NSString).lastPathComponent
        let temporary =
            (directory.isEmpty ? "." : directory) + "/.\(base).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SealedPushError(.io, "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        var ok = false
        defer {
            if !ok { unlink(temporary) }
        }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return write(descriptor, base + written, raw.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                close(descriptor)
                throw SealedPushError(.io, "cannot write \(temporary): \(String(cString: strerror(errno)))")
            }
            written += result
        }
        guard fsync(descriptor) == 0 else {
            close(descriptor)
            throw SealedPushError(.io, "fsync of \(temporary) failed: \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            throw SealedPushError(.io, "cannot rename to \(path): \(String(cString: strerror(errno)))")
        }
        ok = true
        let directoryDescriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}
