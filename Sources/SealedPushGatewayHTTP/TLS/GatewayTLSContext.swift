import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOSSL
import SealedPushCore

/// The TLS server context the API's listener hands to each new connection, reloadable from its files.
///
/// ``reload()`` reads the certificate chain and key again and swaps the context only when both load, match and the
/// certificate is valid now (``Summary/problem(at:)``); a connection keeps the context it started with, so a reload
/// never drops one.
public final class GatewayTLSContext: Sendable {
    /// What a load found, for the log (never key material).
    public struct Summary: Sendable, Hashable, CustomStringConvertible {
        /// The leaf certificate's serial number in hex, two digits a byte, as `openssl x509 -serial` prints it.
        public let serialNumber: String
        /// The leaf certificate's names: its common name and subject alternative names, as NIOSSL lists them.
        public let subject: String
        /// When the leaf certificate becomes valid.
        public let notValidBefore: Date
        /// When the leaf certificate expires.
        public let notValidAfter: Date
        /// Certificates in the chain.
        public let chainLength: Int

        public var description: String {
            let dates = ISO8601DateFormatter()
            return "serial \(serialNumber), \(subject), valid from \(dates.string(from: notValidBefore)) until "
                + "\(dates.string(from: notValidAfter)), chain of \(chainLength)"
        }

        /// Why the certificate cannot be served at `now`: expired, or not yet valid; nil when it can.
        /// - Parameter now: The time judged.
        /// - Returns: The reason, with the certificate's dates.
        public func problem(at now: Date) -> String? {
            let dates = ISO8601DateFormatter()
            if now > notValidAfter {
                return "the certificate expired on \(dates.string(from: notValidAfter)) (valid from "
                    + "\(dates.string(from: notValidBefore)); now \(dates.string(from: now)))"
            }
            if now < notValidBefore {
                return "the certificate is not valid before \(dates.string(from: notValidBefore)) (until "
                    + "\(dates.string(from: notValidAfter)); now \(dates.string(from: now)))"
            }
            return nil
        }

        /// Whole days until the certificate expires (negative once it has).
        /// - Parameter now: The time judged.
        /// - Returns: The days left, rounded down.
        public func daysLeft(at now: Date) -> Int {
            Int((notValidAfter.timeIntervalSince(now) / 86_400).rounded(.down))
        }
    }

    /// Days left under which `serve` warns at start and at each reload.
    public static let expiryWarningDays = 14

    /// The files it loads.
    public let settings: GatewayTLSSettings
    private let state: NIOLockedValueBox<(context: NIOSSLContext, summary: Summary)>
    private let clock: @Sendable () -> Date
    private let logger: Logger?

    /// Loads the certificate chain and key; refuses a certificate that is expired or not yet valid.
    /// - Parameters:
    ///   - settings: The files (absolute paths).
    ///   - logger: Where a certificate that expires within ``expiryWarningDays`` is warned about, at this load and
    ///     each reload; nil: nowhere.
    ///   - clock: The time certificates are judged at.
    /// - Throws: ``GatewayConfigurationError`` naming the file and what is wrong with it.
    public init(
        settings: GatewayTLSSettings, logger: Logger? = nil, clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.settings = settings
        self.clock = clock
        self.logger = logger
        let loaded = try Self.load(settings, now: clock())
        state = NIOLockedValueBox(loaded)
        warnIfExpiringSoon(loaded.summary)
    }

    /// The context for a connection accepted now.
    public var current: NIOSSLContext { state.withLockedValue { $0.context } }

    /// The certificate in use.
    public var summary: Summary { state.withLockedValue { $0.summary } }

    /// Reads the files again; on success, new connections use the new certificate.
    /// - Returns: The new certificate's summary.
    /// - Throws: ``GatewayConfigurationError`` naming the file and why, among them a certificate expired or not yet
    ///   valid (the previous certificate stays in use).
    @discardableResult
    public func reload() throws -> Summary {
        let loaded = try Self.load(settings, now: clock())
        state.withLockedValue { $0 = loaded }
        warnIfExpiringSoon(loaded.summary)
        return loaded.summary
    }

    /// The serial number's bytes as hex, two upper-case digits a byte (`openssl x509 -serial`).
    /// - Parameter bytes: The serial number's big-endian bytes.
    /// - Returns: The hex text.
    public static func serialHex(_ bytes: [UInt8]) -> String { Hex.encode(bytes).uppercased() }

    private func warnIfExpiringSoon(_ summary: Summary) {
        guard let logger else { return }
        let days = summary.daysLeft(at: clock())
        if days < Self.expiryWarningDays {
            logger.warning(
                "TLS certificate expires soon: renew it and send SIGHUP",
                metadata: [
                    "file": "\(settings.certificateFile)", "daysLeft": "\(days)", "certificate": "\(summary)",
                ])
        }
    }

    private static func load(
        _ settings: GatewayTLSSettings, now: Date
    ) throws -> (context: NIOSSLContext, summary: Summary) {
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
        let summary = Summary(
            serialNumber: serialHex(leaf.serialNumber), subject: names(leaf),
            notValidBefore: Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore)),
            notValidAfter: Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter)),
            chainLength: chain.count)
        // Clients refuse a certificate outside its validity: serving it would fail every new connection.
        if let problem = summary.problem(at: now) {
            throw GatewayConfigurationError(
                "tls.certificateFile \(settings.certificateFile) cannot be served: \(problem)")
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
        return (context, summary)
    }

    /// The certificate's names as NIOSSL describes them (`common_name=…;alternative_names=…`), without its serial
    /// number: NIOSSL prints each byte of it without zero padding.
    private static func names(_ certificate: NIOSSLCertificate) -> String {
        var text = Substring(certificate.description)
        if text.hasPrefix("<NIOSSLCertificate;") { text = text.dropFirst("<NIOSSLCertificate;".count) }
        if text.hasSuffix(">") { text = text.dropLast() }
        let parts = text.split(separator: ";").filter { !$0.hasPrefix("serial_number=") }
        return parts.isEmpty ? "no names" : parts.joined(separator: ";")
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
