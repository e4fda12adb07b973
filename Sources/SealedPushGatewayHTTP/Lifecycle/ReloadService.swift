import Logging
import ServiceLifecycle
import UnixSignals

/// What `serve` reads again on `SIGHUP`, until graceful shutdown: the API's TLS certificate and key, and the per-app
/// rate limits from the configuration file.
///
/// A reload that fails keeps what was in use and is logged as an error naming the file or setting; one that works
/// is logged with the new certificate's subject and expiry and the limits' count. Other settings that changed in
/// the file are named in a warning: they take a restart.
public struct ReloadService: Service, CustomStringConvertible {
    private let tls: GatewayTLSContext?
    private let configurationPath: String
    private let environment: [String: String]
    private let loaded: GatewayConfiguration
    private let server: GatewayHTTPServer
    private let logger: Logger

    /// Creates the service.
    /// - Parameters:
    ///   - tls: The context the listener uses, if it serves HTTPS.
    ///   - configurationPath: The configuration file `serve` started from.
    ///   - environment: The process environment (its overrides apply again).
    ///   - loaded: The configuration `serve` started with.
    ///   - server: The API server whose rate limits are replaced.
    ///   - logger: Where reloads are reported.
    public init(
        tls: GatewayTLSContext?, configurationPath: String, environment: [String: String],
        loaded: GatewayConfiguration, server: GatewayHTTPServer, logger: Logger
    ) {
        self.tls = tls
        self.configurationPath = configurationPath
        self.environment = environment
        self.loaded = loaded
        self.server = server
        self.logger = logger
    }

    /// The configuration file and whether TLS is reloaded: never the environment it holds (any secret of the
    /// process) nor the whole configuration (its database URL may carry a password).
    public var description: String {
        "ReloadService(configurationPath: \(configurationPath), tls: \(tls != nil), loaded: \(loaded))"
    }

    /// Waits for `SIGHUP`s and reloads on each, until graceful shutdown.
    public func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        var current = loaded
        for await _ in signals.cancelOnGracefulShutdown() {
            if let tls {
                do {
                    let summary = try tls.reload()
                    logger.notice("TLS certificate reloaded", metadata: ["certificate": "\(summary)"])
                } catch {
                    logger.error(
                        "TLS reload failed: still serving the previous certificate",
                        metadata: ["error": "\(error)", "certificate": "\(tls.summary)"])
                }
            }
            let reloaded: GatewayConfiguration
            do {
                reloaded = try GatewayConfiguration.load(path: configurationPath, environment: environment)
            } catch let error as GatewayConfigurationError {
                logger.error(
                    "configuration reload failed: the rate limits in use stay", metadata: ["error": "\(error.message)"])
                continue
            } catch {
                logger.error("configuration reload failed: the rate limits in use stay", metadata: ["error": "\(error)"])
                continue
            }
            let limits = reloaded.rateLimits ?? RateLimits()
            server.updateRateLimits(limits)
            logger.notice(
                "rate limits reloaded",
                metadata: ["apps": "\(limits.apps.count)", "changed": "\(limits != (current.rateLimits ?? RateLimits()))"])
            let restart = Self.settingsTakingARestart(from: current, to: reloaded)
            if !restart.isEmpty {
                logger.warning(
                    "changed settings that take a restart (the running values stay)",
                    metadata: ["settings": "\(restart.joined(separator: ", "))"])
            }
            current.rateLimits = reloaded.rateLimits
        }
    }

    /// The top-level settings that differ, but for the ones a reload applies (`rateLimits`; `tls` files are read
    /// again whatever their names).
    static func settingsTakingARestart(from old: GatewayConfiguration, to new: GatewayConfiguration) -> [String] {
        var changed: [String] = []
        if old.listen != new.listen { changed.append("listen") }
        if old.database != new.database { changed.append("database") }
        if old.maxBodyBytes != new.maxBodyBytes { changed.append("maxBodyBytes") }
        if old.logLevel != new.logLevel { changed.append("logLevel") }
        if old.logFormat != new.logFormat { changed.append("logFormat") }
        if old.overflow != new.overflow { changed.append("overflow") }
        if old.delivery != new.delivery { changed.append("delivery") }
        if old.allowPlainHTTP != new.allowPlainHTTP { changed.append("allowPlainHTTP") }
        if old.tls != new.tls { changed.append("tls") }
        if old.metricsListen != new.metricsListen { changed.append("metricsListen") }
        return changed
    }
}
