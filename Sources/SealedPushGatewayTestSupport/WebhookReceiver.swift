import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A small HTTP/1.1 server on loopback (plain, or TLS with a certificate of the test's) that records every request
/// (method, path, headers, body, arrival time) and answers each with the next status of a script (200 once the
/// script is used up), optionally after a delay, with a `Location` header on 3xx answers and a `Retry-After` header on
/// 4xx and 5xx answers.
public final class WebhookReceiver: Sendable {
    /// One request received.
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var headers: [(String, String)]
        public var body: [UInt8]
        /// When its last byte arrived.
        public var receivedAt: ContinuousClock.Instant

        /// A header's value (case-insensitive name).
        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let state: State

    final class State: @unchecked Sendable {
        private let lock = NSLock()
        private var answers: [Int]
        private var received: [Request] = []
        let delay: Duration
        let location: String?
        let retryAfter: String?
        init(answers: [Int], delay: Duration, location: String?, retryAfter: String?) {
            self.answers = answers
            self.delay = delay
            self.location = location
            self.retryAfter = retryAfter
        }
        func record(_ request: Request) -> Int {
            lock.withLock {
                received.append(request)
                return answers.isEmpty ? 200 : answers.removeFirst()
            }
        }
        var requests: [Request] { lock.withLock { received } }
    }

    /// The port it listens on (127.0.0.1).
    public var port: Int { channel.localAddress?.port ?? 0 }
    /// The requests received so far.
    public var requests: [Request] { state.requests }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, state: State) {
        self.group = group
        self.channel = channel
        self.state = state
    }

    /// Starts a receiver answering the statuses in `answers` in turn, then 200.
    /// - Parameters:
    ///   - answers: The statuses of the first answers.
    ///   - delay: How long each answer waits after its request arrived (a slow receiver).
    ///   - location: The `Location` header of 3xx answers.
    ///   - retryAfter: The `Retry-After` header of 4xx and 5xx answers.
    ///   - tls: A PEM certificate and its PEM private key to serve HTTPS with; nil for plain HTTP.
    /// - Returns: The running receiver.
    public static func start(
        answers: [Int], delay: Duration = .zero, location: String? = nil, retryAfter: String? = nil,
        tls: (certificatePEM: String, privateKeyPEM: String)? = nil
    ) async throws -> WebhookReceiver {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = State(answers: answers, delay: delay, location: location, retryAfter: retryAfter)
        let sslContext = try tls.map { pair in
            try NIOSSLContext(
                configuration: .makeServerConfiguration(
                    certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(pair.certificatePEM.utf8), format: .pem))],
                    privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(pair.privateKeyPEM.utf8), format: .pem))))
        }
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return WebhookReceiver(group: group, channel: channel, state: state)
    }

    /// Closes the listener.
    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let state: State
        private var head: HTTPRequestHead?
        private var body: [UInt8] = []

        init(state: State) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(let buffer):
                body += buffer.readableBytesView
            case .end:
                guard let head else { return }
                let status = state.record(
                    Request(
                        method: head.method.rawValue, path: head.uri,
                        headers: head.headers.map { ($0.name, $0.value) }, body: body,
                        receivedAt: ContinuousClock.now))
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: "0")
                headers.add(name: "Connection", value: "close")
                if (300..<400).contains(status), let location = state.location {
                    headers.add(name: "Location", value: location)
                }
                if (400..<600).contains(status), let retryAfter = state.retryAfter {
                    headers.add(name: "Retry-After", value: retryAfter)
                }
                let response = HTTPResponseHead(version: head.version, status: .init(statusCode: status), headers: headers)
                let delay = state.delay
                let answer = { [self] in
                    context.write(wrapOutboundOut(.head(response)), promise: nil)
                    let channel = context.channel
                    context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
                }
                if delay == .zero {
                    answer()
                } else {
                    let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
                    context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) { answer() }
                }
            }
        }
    }
}
