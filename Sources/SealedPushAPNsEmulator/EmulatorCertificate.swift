internal import COpenSSL
import Foundation
import SealedPushCore

/// A self-signed TLS certificate and its P-256 private key, generated with OpenSSL when the emulator starts.
///
/// The certificate names `localhost`, `127.0.0.1` and `::1` (subjectAltName), so a client that trusts this
/// certificate (and only it) can verify the emulator's identity on loopback.
package struct EmulatorCertificate: Sendable {
    /// The certificate, PEM.
    package let certificatePEM: String
    /// The private key, PKCS#8 PEM (kept in memory only).
    package let privateKeyPEM: String

    /// Validity: one hour back (clock skew) to 30 days ahead.
    static let validityDays = 30

    package static func generate() throws -> EmulatorCertificate {
        _ = drainErrors()
        guard let keyContext = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw failure("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(keyContext) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(keyContext) == 1, EVP_PKEY_CTX_set_group_name(keyContext, "P-256") == 1,
            EVP_PKEY_generate(keyContext, &key) == 1, let key
        else { throw failure("P-256 key generation") }
        defer { EVP_PKEY_free(key) }

        guard let certificate = X509_new() else { throw failure("X509_new") }
        defer { X509_free(certificate) }
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { throw failure("RAND_bytes") }
        serial[0] &= 0x7F
        guard X509_set_version(certificate, 2) == 1,
            let serialNumber = BN_bin2bn(serial, Int32(serial.count), nil)
        else { throw failure("serial number") }
        defer { BN_free(serialNumber) }
        guard BN_to_ASN1_INTEGER(serialNumber, X509_get_serialNumber(certificate)) != nil,
            X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil,
            X509_gmtime_adj(X509_getm_notAfter(certificate), 86_400 * validityDays) != nil,
            X509_set_pubkey(certificate, key) == 1,
            let name = X509_get_subject_name(certificate),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "localhost", -1, -1, 0) == 1,
            X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, "SealedPush APNs emulator", -1, -1, 0) == 1,
            X509_set_issuer_name(certificate, name) == 1
        else { throw failure("certificate fields") }
        try addSubjectAltName(certificate)
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw failure("X509_sign") }

        let certificatePEM = try pem { bio in PEM_write_bio_X509(bio, certificate) }
        let keyPEM = try pem { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
        return EmulatorCertificate(certificatePEM: certificatePEM, privateKeyPEM: keyPEM)
    }

    /// subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1, encoded by hand as DER GeneralNames.
    private static func addSubjectAltName(_ certificate: OpaquePointer) throws {
        var names: [UInt8] = [0x82, 0x09] + Array("localhost".utf8)
        names += [0x87, 0x04, 127, 0, 0, 1]
        names += [0x87, 0x10] + [UInt8](repeating: 0, count: 15) + [1]
        let der: [UInt8] = [0x30, UInt8(names.count)] + names
        guard let octets = ASN1_OCTET_STRING_new() else { throw failure("ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(octets) }
        guard ASN1_OCTET_STRING_set(octets, der, Int32(der.count)) == 1,
            let extensionValue = X509_EXTENSION_create_by_NID(nil, NID_subject_alt_name, 0, octets)
        else { throw failure("subjectAltName") }
        defer { X509_EXTENSION_free(extensionValue) }
        guard X509_add_ext(certificate, extensionValue, -1) == 1 else { throw failure("X509_add_ext") }
    }

    private static func pem(_ write: (OpaquePointer) -> Int32) throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure("BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw failure("PEM encoding") }
        let pending = Int(BIO_ctrl_pending(bio))
        guard pending > 0, pending < 65_536 else { throw failure("PEM length") }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(pending)) }
        guard Int(read) == pending else { throw failure("BIO_read") }
        defer { for index in bytes.indices { bytes[index] = 0 } }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func drainErrors() -> [String] {
        var result: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        for _ in 0..<64 {
            let code = ERR_get_error()
            if code == 0 { break }
            buffer.withUnsafeMutableBufferPointer { ERR_error_string_n(code, $0.baseAddress, $0.count) }
            result.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return result
    }

    private static func failure(_ step: String) -> SealedPushError {
        SealedPushError(
            .io,
            "APNs emulator: cannot generate the emulator's TLS certificate (\(step)): "
                + drainErrors().joined(separator: "; "))
    }
}
