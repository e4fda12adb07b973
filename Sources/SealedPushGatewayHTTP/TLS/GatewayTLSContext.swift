import Foundation
import NIOConcurrencyHelpers
import NIOSSL

/// The TLS server context the API's listener hands to each new connection, reloadable from its files.
///
/// ``reload()`` reads the certificate chain and key again and swaps the context only when both load and match; a
/// connection keeps the context it started with, so a reload never drops one.
public final class GatewayTLSContext: Sendable {
    /// What a load found, for the log (never key material).
    public struct Summary: Sendable, Hashable, CustomStringConvertible {
        /// The leaf certificate's subject, as OpenSSL prints it in one line.
        public let subject: String
        /// When the leaf certificate expires.
        public let notValidAfter: Date
        /// Certificates in the chain.
        public let chainLength: Int

        public var description: String {
            "\(subject), valid until \(ISO8601DateFormatter().string(from: notValidAfter)), chain of \(chainLength)"
        }
    }

    /// The files it loads.
    public let settings: GatewayTLSSettings
    private let state: NIOLockedValueBox<(context: NIOSSLContext, summary: Summary)>

    /// Loads the certificate chain and key.
    /// - Parameter settings: The files (absolute paths).
    /// - Throws: ``GatewayConfigurationError`` naming the file and what is wrong with it.
    public init(settings: GatewayTLSSettings) throws {
        self.settings = settings
        state = NIOLockedValueBox(try Self.load(settings))
    }

    /// The context for a connection accepted now.
    public var current: NIOSSLContext { state.withLockedValue { $0.context } }

    /// The certificate in use.
    public var summary: Summary { state.withLockedValue { $0.summary } }

    /// Reads the files again; on success, new connections use the new certificate.
    /// - Returns: The new certificate's summary.
    /// - Throws: ``GatewayConfigurationError`` (the previous certificate stays in use).
    @discardableResult
    public func reload() throws -> Summary {
        let loaded = try Self.load(settings)
        state.withLockedValue { $0 = loaded }
        return loaded.summary
    }

    private static func load(_ settings: GatewayTLSSettings) throws -> (context: NIOSSLContext, summary: Summary) {
        try checkKeyFile(settings.keyFile)
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(settings.certificateFile)
        } catch {
            throw GatewayConfigurationError(
                "tls.certificateFile \(settings.certificateFile) cannot be read as PEM certificates: \(error)")
        }
        guard let leaf = chain.first else {
            throw GatewayConfigurationError("tls.certificateFile \(settings.certificateFile) holds no certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: settings.keyFile, format: .pem)
        } catch {
            throw GatewayConfigurationError(
                "tls.keyFile \(settings.keyFile) cannot be read as a PEM private key (PKCS#8, RSA or EC)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["http/1.1"]
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            // BoringSSL refuses a key that is not the leaf certificate's here.
            throw GatewayConfigurationError(
                "tls.keyFile \(settings.keyFile) is not the private key of the certificate in "
                    + "\(settings.certificateFile), or the pair cannot be used (\(error))")
        }
        let subject = leaf.description
        let summary = Summary(
            subject: subject, notValidAfter: Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter)),
            chainLength: chain.count)
        return (context, summary)
    }

    /// Refuses a key file that is missing, not a regular file, or readable by anyone but its owner.
    private static func checkKeyFile(_ path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw GatewayConfigurationError("tls.keyFile \(path) cannot be read (\(String(cString: strerror(errno))))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw GatewayConfigurationError("tls.keyFile \(path) is not a regular file")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw GatewayConfigurationError(
                "tls.keyFile \(path) may be read by others (mode \(String(status.st_mode & 0o777, radix: 8))): "
                    + "chmod 600 it")
        }
    }
}
