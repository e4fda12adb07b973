import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import SealedPushAPNsEmulator
import SealedPushCore

/// An FCM HTTP v1 emulator on loopback: TLS with ALPN `h2` and `http/1.1` (Google's client libraries use
/// HTTP/1.1) and a self-signed certificate generated at start; an OAuth token endpoint that verifies RS256 JWT
/// assertions (RFC 7523) from configured service accounts; `POST /v1/projects/{project}/messages:send` with FCM's
/// validation rules and error shapes (`Specs/fcm-v1.md` §3, §6); faults; a bounded recorder.
///
/// ```swift
/// let emulator = try FCMEmulator(configuration: config)
/// try await emulator.start()
/// // token_uri = emulator.tokenURI; send to emulator.baseURL trusting emulator.certificatePEM
/// await emulator.stop()
/// ```
public final class FCMEmulator: @unchecked Sendable {
    /// The configuration it was created with.
    public let configuration: FCMEmulatorConfiguration
    /// What it accepted.
    public var recorder: FCMEmulatorRecorder { core.recorder }
    /// The generated certificate (PEM): trust it, and only it, in clients.
    public let certificatePEM: String

    private let core: FCMEmulatorCore
    private let certificate: EmulatorCertificate
    private let lock = NSLock()
    private var group: MultiThreadedEventLoopGroup?
    private var serverChannel: Channel?
    private var boundPort = 0

    /// Creates an emulator (nothing listens until ``start()``) and generates its certificate.
    /// - Parameters:
    ///   - configuration: Address, accounts, rules and faults.
    ///   - logger: Where to log (never bodies or tokens).
    /// - Throws: `SealedPushError` (`invalidArgument`) for a non-loopback host or bad numbers, `invalidKey` for an
    ///   account key that is not RSA.
    public init(configuration: FCMEmulatorConfiguration, logger: Logger = Logger(label: "sealedpush.fcm-emulator")) throws {
        guard ["localhost", "::1"].contains(configuration.host) || configuration.host.hasPrefix("127.") else {
            throw SealedPushError(
                .invalidArgument, "FCM emulator: the emulator binds loopback addresses only, not \(configuration.host)")
        }
        guard (0...65_535).contains(configuration.port), configuration.threads >= 1, configuration.threads <= 16,
            configuration.maxConcurrentStreams >= 1, configuration.tokenPath.hasPrefix("/")
        else {
            throw SealedPushError(
                .invalidArgument, "FCM emulator: port 0...65535, threads 1...16, maxConcurrentStreams ≥ 1, tokenPath /…")
        }
        let total = configuration.faults.totalProbability + configuration.unregisterProbability
        guard total >= 0, total <= 1, configuration.unregisterProbability >= 0,
            configuration.faults.random.allSatisfy({ $0.probability >= 0 })
        else {
            throw SealedPushError(
                .invalidArgument, "FCM emulator: fault probabilities must be ≥ 0 and sum to at most 1 (got \(total))")
        }
        self.configuration = configuration
        self.core = try FCMEmulatorCore(configuration: configuration, logger: logger)
        self.certificate = try EmulatorCertificate.generate()
        self.certificatePEM = certificate.certificatePEM
    }

    /// The bound port (after ``start()``).
    public var port: Int { lock.withLock { boundPort } }

    /// `https://127.0.0.1:PORT` (after ``start()``).
    public var baseURL: String { "https://\(configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host):\(port)" }

    /// The token endpoint, for a service-account file's `token_uri`.
    public var tokenURI: String { baseURL + configuration.tokenPath }

    /// Marks a registration token as gone: every later send to it gets 404 `UNREGISTERED`.
    /// - Parameter token: The registration token.
    public func unregister(token: String) { core.unregister(token) }

    /// Writes the certificate (if configured), binds and starts serving.
    /// - Throws: `SealedPushError` (`io`) if the certificate cannot be written or the address cannot be bound.
    public func start() async throws {
        if let path = configuration.certificateOutputPath {
            do {
                try Data(certificatePEM.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw SealedPushError(.io, "FCM emulator: cannot write the certificate to \(path): \(error.localizedDescription)")
            }
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificate.certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(certificate.privateKeyPEM.utf8), format: .pem)))
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2", "http/1.1"]
        let sslContext = try NIOSSLContext(configuration: tls)

        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
        ]
        connectionConfiguration.maximumConnectionGlitches = 100_000
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.streamResetFrameRateLimit.maximumCount = configuration.maximumStreamResets
        streamConfiguration.streamResetFrameRateLimit.windowLength = .seconds(30)
        streamConfiguration.streamErrorRateLimit.maximumCount = 100_000
        let core = self.core
        let http2Connection = connectionConfiguration
        let http2Stream = streamConfiguration
        let streamsPerConnection = configuration.streamsPerConnection

        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.threads)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                core.recorder.countConnection()
                let rotation = FCMConnectionRotation(streamsPerConnection: streamsPerConnection)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                }.flatMap {
                    channel.configureCommonHTTPServerPipeline(
                        connectionConfiguration: http2Connection, streamConfiguration: http2Stream
                    ) { child in
                        // An HTTP/2 stream's parent is the TCP connection, whose parent is the listener; an HTTP/1.1
                        // connection (ALPN http/1.1, or none) is itself the child of the listener.
                        child.eventLoop.makeCompletedFuture {
                            try child.pipeline.syncOperations.addHandler(
                                FCMEmulatorHandler(core: core, isHTTP2Stream: child.parent?.parent != nil))
                            rotation.streamOpened(child)
                        }
                    }
                }
            }
        let channel: Channel
        do {
            channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw SealedPushError(.io, "FCM emulator: cannot bind \(configuration.host):\(configuration.port): \(error)")
        }
        let port = channel.localAddress?.port ?? configuration.port
        core.port = port
        lock.withLock {
            self.group = group
            self.serverChannel = channel
            self.boundPort = port
        }
        core.logger.info("FCM emulator listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
    }

    /// Stops listening, closes every connection and releases the threads. Safe to call twice.
    public func stop() async {
        let (group, channel) = lock.withLock { () -> (MultiThreadedEventLoopGroup?, Channel?) in
            defer {
                self.group = nil
                self.serverChannel = nil
            }
            return (self.group, self.serverChannel)
        }
        try? await channel?.close().get()
        try? await group?.shutdownGracefully()
    }

    /// Runs until the task is cancelled, then stops.
    public func runUntilCancelled() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(3600))
        }
        await stop()
    }
}
