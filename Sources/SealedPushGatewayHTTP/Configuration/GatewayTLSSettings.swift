/// The `tls` section of the gateway's configuration: the API is served over HTTPS with this certificate and key.
///
/// ```json
/// "tls": { "certificateFile": "tls/fullchain.pem", "keyFile": "tls/privkey.pem" }
/// ```
///
/// Both files are PEM: the certificate file holds the server's certificate first, then any intermediates; the key
/// file holds its private key (PKCS#8, or traditional RSA/EC), readable by the gateway's user only (mode 0600 or
/// stricter: `serve` refuses a key file others may read). Relative paths are resolved against the configuration
/// file's directory. `serve` reads both at start and again on `SIGHUP`, so a renewed certificate is picked up
/// without a restart: connections open at the reload keep their session, new ones get the new certificate. A reload
/// that fails (missing file, key not matching the certificate) is logged and the previous certificate stays in use.
public struct GatewayTLSSettings: Sendable, Hashable, Codable {
    /// The PEM certificate chain (leaf first).
    public var certificateFile: String
    /// The PEM private key of the leaf certificate.
    public var keyFile: String

    /// Creates the section.
    /// - Parameters:
    ///   - certificateFile: The PEM certificate chain (leaf first).
    ///   - keyFile: The PEM private key.
    public init(certificateFile: String, keyFile: String) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case certificateFile, keyFile
    }

    /// The section's keys (what ``ConfigurationKeyCheck`` accepts).
    static let knownKeys = CodingKeys.allCases.map(\.stringValue)

    /// Makes both paths absolute against `base`.
    mutating func resolvePaths(against base: String) {
        func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : base + "/" + path }
        certificateFile = resolve(certificateFile)
        keyFile = resolve(keyFile)
    }
}
