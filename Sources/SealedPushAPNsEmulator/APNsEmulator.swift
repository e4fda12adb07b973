import Foundation
import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import SealedPushCore

// The configuration, the fault plan and `RecordedNotification` live in the NIO-free rules module; users of the
// emulator see them through this module, as before.
@_exported import SealedPushAPNsEmulatorRules

/// An APNs provider-API emulator on loopback: TLS 1.2+ with ALPN `h2` and a self-signed certificate generated at
/// start, HTTP/2 (swift-nio-http2), `POST /3/device/<token>` with Apple's rules and reasons, fault injection, and
/// a recorder of what it accepted.
///
/// ```swift
/// let emulator = try APNsEmulator(configuration: config)
/// try await emulator.start()
/// // connect to 127.0.0.1:emulator.port trusting emulator.certificatePEM
/// await emulator.stop()
/// ```
public final class APNsEmulator: @unchecked Sendable {
    /// The configuration it was created with.
    public let configuration: APNsEmulatorConfiguration
    /// What it accepted and how many requests each `apns-id` got.
    public var recorder: APNsEmulatorRecorder { core.recorder }
    /// The generated certificate (PEM): trust it, and only it, in clients.
    public let certificatePEM: String

    private let core: EmulatorCore
    private let certificate: EmulatorCertificate
    private let lock = NSLock()
    private var group: MultiThreadedEventLoopGroup?
    private var serverChannel: Channel?
    private var boundPort = 0

    /// Creates an emulator (nothing listens until ``start()``) and generates its certificate.
    /// - Parameters:
    ///   - configuration: Address, auth key, rules and faults.
    ///   - logger: Where to log (requests at debug level, no bodies).
    /// - Throws: `SealedPushError` for a non-loopback host, an unusable auth key or a certificate failure.
    public init(configuration: APNsEmulatorConfiguration, logger: Logger = Logger(label: "sealedpush.apns-emulator"))
        throws
    {
        guard Self.isLoopback(configuration.host) else {
            throw SealedPushError(
                .invalidArgument, "APNs emulator: the emulator binds loopback addresses only, not \(configuration.host)"
            )
        }
        guard (0...65_535).contains(configuration.port) else {
            throw SealedPushError(
                .invalidArgument, "APNs emulator: port \(configuration.port) is out of range 0...65535")
        }
        guard configuration.maxConcurrentStreams >= 1, configuration.threads >= 1, configuration.threads <= 16 else {
            throw SealedPushError(
                .invalidArgument, "APNs emulator: maxConcurrentStreams must be ≥ 1 and threads in 1...16")
        }
        let total = configuration.faults.totalProbability
        guard total >= 0, total <= 1, configuration.faults.random.allSatisfy({ $0.probability >= 0 }) else {
            throw SealedPushError(
                .invalidArgument,
                "APNs emulator: fault probabilities must be ≥ 0 and sum to at most 1 (got \(total))")
        }
        self.configuration = configuration
        self.core = try EmulatorCore(configuration: configuration, logger: logger)
        self.certificate = try EmulatorCertificate.generate()
        self.certificatePEM = certificate.certificatePEM
    }

    /// The bound port (after ``start()``; the real one when 0 was configured).
    public var port: Int { lock.withLock { boundPort } }

    /// Where the certificate was written, if configured.
    public var certificatePath: String? { configuration.certificateOutputPath }

    /// Writes the certificate (if configured), creates the record file (if configured), binds and starts serving.
    /// - Throws: `SealedPushError` if the certificate or the record file cannot be written or the address cannot be
    ///   bound.
    public func start() async throws {
        if let path = configuration.certificateOutputPath {
            do {
                try Data(certificatePEM.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw SealedPushError(
                    .io, "APNs emulator: cannot write the certificate to \(path): \(error.localizedDescription)")
            }
        }
        try core.recorder.openRecordFile()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [
                .certificate(
                    try NIOSSLCertificate(
                        bytes: Array(certificate.certificatePEM.utf8),
                        format: .pem))
            ],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(certificate.privateKeyPEM.utf8), format: .pem)))
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)

        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 8192),
            HTTP2Setting(parameter: .initialWindowSize, value: 65_535),
        ]
        connectionConfiguration.maximumConnectionGlitches = 100_000
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.streamResetFrameRateLimit.maximumCount = 100_000
        streamConfiguration.streamResetFrameRateLimit.windowLength = .seconds(1)
        streamConfiguration.streamErrorRateLimit.maximumCount = 100_000
        streamConfiguration.streamErrorRateLimit.windowLength = .seconds(1)
        let core = self.core
        let http2Connection = connectionConfiguration
        let http2Stream = streamConfiguration

        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.threads)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLServerHandler(context: sslContext))
                    let connection = EmulatorConnection(channel: channel, core: core)
                    _ = try sync.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: http2Connection,
                        streamConfiguration: http2Stream
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(EmulatorStreamHandler(connection: connection))
                        }
                    }
                    try sync.addHandler(EmulatorConnectionHandler(connection: connection))
                }
            }
        let channel: Channel
        do {
            channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            try? await group.shutdownGracefully()
            core.recorder.closeRecordFile()
            throw SealedPushError(
                .io, "APNs emulator: cannot bind \(configuration.host):\(configuration.port): \(error)")
        }
        let port = channel.localAddress?.port ?? configuration.port
        lock.withLock {
            self.group = group
            self.serverChannel = channel
            self.boundPort = port
        }
        core.logger.info("APNs emulator listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
    }

    /// Stops listening, closes every connection, releases the threads and writes out the record file. Safe to call
    /// twice.
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
        core.recorder.closeRecordFile()
    }

    /// Runs until the task is cancelled, then stops.
    public func runUntilCancelled() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(3600))
        }
        await stop()
    }

    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".")
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
