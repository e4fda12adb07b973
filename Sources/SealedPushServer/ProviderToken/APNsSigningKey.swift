internal import COpenSSL
import Foundation
import SealedPushCore

/// An APNs token-authentication signing key: the P-256 private key from Apple's `.p8` file (unencrypted PKCS#8
/// PEM, `-----BEGIN PRIVATE KEY-----`), used through OpenSSL to make ES256 signatures.
///
/// The key is immutable after loading; signing uses a fresh OpenSSL context per call, so one instance may be
/// shared by all connections and tasks.
public final class APNsSigningKey: @unchecked Sendable {
    /// The length of an ES256 signature in JOSE form: `r || s`, 32 bytes each.
    public static let joseSignatureLength = 64
    /// The largest `.p8` file accepted (Apple's are about 250 bytes).
    public static let maximumFileLength = 16 * 1024

    private let key: OpaquePointer  // EVP_PKEY*, owned

    /// Loads a key from the bytes of a `.p8` file.
    /// - Parameter pemBytes: The file's bytes: an unencrypted PKCS#8 PEM P-256 private key. The caller should
    ///   zero its copy after this returns; this initializer keeps no copy of the text.
    /// - Throws: `SealedPushError` with code `.invalidKey` if the text is not such a key.
    public init(pemBytes: [UInt8]) throws {
        guard pemBytes.count <= Self.maximumFileLength else {
            throw SealedPushError(
                .invalidKey, "the .p8 key is \(pemBytes.count) bytes, over the \(Self.maximumFileLength)-byte limit")
        }
        let label = Array("-----BEGIN PRIVATE KEY-----".utf8)
        guard Self.contains(pemBytes, label) else {
            throw SealedPushError(
                .invalidKey,
                "the .p8 key must be an unencrypted PKCS#8 PEM block (-----BEGIN PRIVATE KEY-----) as Apple issues it")
        }
        _ = OpenSSLErrorQueue.drain()
        let loaded: OpaquePointer? = pemBytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            // A callback that refuses to supply a passphrase: never prompt on a terminal.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let loaded else {
            throw OpenSSLErrorQueue.error(.invalidKey, "the .p8 key could not be parsed as a PKCS#8 private key")
        }
        guard EVP_PKEY_get_base_id(loaded) == NID_X9_62_id_ecPublicKey, Self.groupName(loaded) == "prime256v1" else {
            EVP_PKEY_free(loaded)
            throw SealedPushError(.invalidKey, "the .p8 key is not a P-256 (prime256v1) EC key; ES256 needs P-256")
        }
        self.key = loaded
    }

    /// Loads a key from a `.p8` file.
    /// - Parameter path: The file's path.
    /// - Throws: `SealedPushError` with code `.io` if the file cannot be read, `.invalidKey` if it is not a key.
    public convenience init(contentsOfFile path: String) throws {
        var bytes: [UInt8]
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            bytes = Array(try handle.read(upToCount: Self.maximumFileLength + 1) ?? Data())
        } catch {
            throw SealedPushError(.io, "cannot read the .p8 key at \(path): \(error.localizedDescription)")
        }
        defer {
            for index in bytes.indices { bytes[index] = 0 }
        }
        try self.init(pemBytes: bytes)
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Signs a message with ECDSA P-256 / SHA-256 and returns the JOSE form.
    /// - Parameter message: The bytes to sign (for a JWT: `b64url(header) "." b64url(claims)`).
    /// - Returns: The 64-byte `r || s` signature, each half big-endian and left-padded to 32 bytes.
    /// - Throws: `SealedPushError` with code `.invalidKey` and OpenSSL's error queue if signing fails.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        let der = try signDER(message)
        return try Self.joseSignature(fromDER: der)
    }

    private func signDER(_ message: [UInt8]) throws -> [UInt8] {
        _ = OpenSSLErrorQueue.drain()
        guard let context = EVP_MD_CTX_new() else {
            throw OpenSSLErrorQueue.error(.invalidKey, "EVP_MD_CTX_new failed")
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "EVP_DigestSignInit failed for ES256")
        }
        var length = 0
        let sizeOK = message.withUnsafeBufferPointer { input in
            EVP_DigestSign(context, nil, &length, input.baseAddress, input.count)
        }
        guard sizeOK == 1, length > 0, length <= 128 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "EVP_DigestSign could not size the ES256 signature")
        }
        var der = [UInt8](repeating: 0, count: length)
        let signOK = message.withUnsafeBufferPointer { input in
            der.withUnsafeMutableBufferPointer { output in
                EVP_DigestSign(context, output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard signOK == 1 else {
            throw OpenSSLErrorQueue.error(.invalidKey, "EVP_DigestSign failed for ES256")
        }
        return Array(der.prefix(length))
    }

    /// Converts a DER `ECDSA-Sig-Value` (`SEQUENCE { r INTEGER, s INTEGER }`) to the 64-byte JOSE form.
    /// - Parameter der: The DER signature.
    /// - Returns: `r || s`, 32 bytes each.
    /// - Throws: `SealedPushError` with code `.invalidKey` if the DER is malformed or a half exceeds 32 bytes.
    static func joseSignature(fromDER der: [UInt8]) throws -> [UInt8] {
        _ = OpenSSLErrorQueue.drain()
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            throw OpenSSLErrorQueue.error(.invalidKey, "the ECDSA signature is not valid DER")
        }
        defer { ECDSA_SIG_free(parsed) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(parsed, &r, &s)
        var out = [UInt8](repeating: 0, count: joseSignatureLength)
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress, let r, let s else { return false }
            return BN_bn2binpad(r, base, 32) == 32 && BN_bn2binpad(s, base + 32, 32) == 32
        }
        guard ok else {
            throw OpenSSLErrorQueue.error(.invalidKey, "an ECDSA signature half does not fit in 32 bytes")
        }
        return out
    }

    private static func groupName(_ key: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        let ok = buffer.withUnsafeMutableBufferPointer { pointer in
            EVP_PKEY_get_group_name(key, pointer.baseAddress, pointer.count, &length)
        }
        guard ok == 1, length < buffer.count else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }
}
