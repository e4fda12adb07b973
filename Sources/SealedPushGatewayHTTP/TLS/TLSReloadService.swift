import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the API's TLS certificate and key on `SIGHUP` until graceful shutdown.
///
/// A reload that fails is logged as an error naming the file and the previous certificate stays in use; a
/// successful one is logged with the new certificate's subject and expiry.
public struct TLSReloadService: Service {
    private let tls: GatewayTLSContext
    private let logger: Logger

    /// Creates the service.
    /// - Parameters:
    ///   - tls: The context the listener uses.
    ///   - logger: Where reloads are reported.
    public init(tls: GatewayTLSContext, logger: Logger) {
        self.tls = tls
        self.logger = logger
    }

    /// Waits for `SIGHUP`s and reloads on each, until graceful shutdown.
    public func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            do {
                let summary = try tls.reload()
                logger.notice("TLS certificate reloaded", metadata: ["certificate": "\(summary)"])
            } catch {
                logger.error(
                    "TLS reload failed: still serving the previous certificate",
                    metadata: ["error": "\(error)", "certificate": "\(tls.summary)"])
            }
        }
    }
}
