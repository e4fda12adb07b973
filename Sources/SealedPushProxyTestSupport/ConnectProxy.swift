import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP `CONNECT` proxy on loopback for tests (RFC 9110 §9.3.6): parses each request with NIO's HTTP/1
/// decoder, checks `Proxy-Authorization` when told to, dials the target and splices the two connections. Records
/// every `CONNECT` it was asked for.
public final class ConnectProxy: Sendable {
    /// What the proxy does with a `CONNECT`.
    public enum Policy: Sendable {
        /// Opens every tunnel.
        case open
        /// Opens tunnels only for this `Proxy-Authorization` value; `407` with `Proxy-Authenticate` otherwise.
        case requireAuthorization(String)
        /// Answers every `CONNECT` with this status (for example 403) and closes.
        case refuse(status: Int)
        /// Reads the request and never answers.
        case silent
    }

    /// One `CONNECT` request the proxy received.
    public struct Request: Sendable, Equatable {
        /// The request target (`host:port`).
        public let target: String
        /// The `Host` header.
        public let host: String?
        /// The `Proxy-Authorization` header.
        public let authorization: String?
        /// Whether the proxy opened the tunnel.
        public let opened: Bool

        /// A request as a test expects it.
        public init(target: String, host: String?, authorization: String?, opened: Bool) {
            self.target = target
            self.host = host
            self.authorization = authorization
            self.opened = opened
        }
    }

    private let group: MultiThreadedEventLoopGroup
    private let channel: Channel
    private let recorded = NIOLockedValueBox<[Request]>([])
    /// The loopback port it listens on.
    public let port: Int

    /// Starts listening on `127.0.0.1`.
    /// - Parameter policy: What it does with each `CONNECT`.
    public init(policy: Policy = .open) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let recorded = recorded
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
                    try child.pipeline.syncOperations.addHandler(decoder)
                    try child.pipeline.syncOperations.addHandler(
                        ConnectRequestHandler(policy: policy, decoder: decoder) { request in
                            recorded.withLockedValue { $0.append(request) }
                        })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.group = group
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
    }

    /// Every `CONNECT` received so far, in order.
    public var requests: [Request] { recorded.withLockedValue { $0 } }

    /// Stops listening and closes the tunnels' event loop.
    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// One client connection of the proxy: the `CONNECT` head, then a tunnel (or a refusal).
private final class ConnectRequestHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart

    private let policy: ConnectProxy.Policy
    private let decoder: ByteToMessageHandler<HTTPRequestDecoder>
    private let record: @Sendable (ConnectProxy.Request) -> Void
    private var head: HTTPRequestHead?

    init(
        policy: ConnectProxy.Policy, decoder: ByteToMessageHandler<HTTPRequestDecoder>,
        record: @escaping @Sendable (ConnectProxy.Request) -> Void
    ) {
        self.policy = policy
        self.decoder = decoder
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead): head = requestHead
        case .body: break
        case .end: answer(context)
        }
    }

    private func answer(_ context: ChannelHandlerContext) {
        guard let head else { return context.close(promise: nil) }
        let authorization = head.headers["Proxy-Authorization"].first
        let request = { @Sendable (opened: Bool) in
            ConnectProxy.Request(
                target: head.uri, host: head.headers["Host"].first, authorization: authorization, opened: opened)
        }
        guard head.method == .CONNECT else {
            record(request(false))
            return reply(context, "405 Method Not Allowed", close: true)
        }
        switch policy {
        case .silent:
            record(request(false))
            return
        case .refuse(let status):
            record(request(false))
            return reply(context, "\(status) Refused", close: true)
        case .requireAuthorization(let expected) where authorization != expected:
            record(request(false))
            return reply(
                context, "407 Proxy Authentication Required", extra: "Proxy-Authenticate: Basic realm=\"test\"\r\n",
                close: true)
        case .open, .requireAuthorization:
            break
        }
        guard let colon = head.uri.lastIndex(of: ":"), let port = Int(head.uri[head.uri.index(after: colon)...]) else {
            record(request(false))
            return reply(context, "400 Bad Request", close: true)
        }
        var host = String(head.uri[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let client = context.channel
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .connectTimeout(.seconds(5))
            .connect(host: host, port: port)
            .whenComplete { result in
                let (handler, context) = loopBound.value
                switch result {
                case .failure:
                    handler.record(request(false))
                    handler.reply(context, "502 Bad Gateway", close: true)
                case .success(let target):
                    handler.record(request(true))
                    handler.splice(context, client: client, target: target)
                }
            }
    }

    private func splice(_ context: ChannelHandlerContext, client: Channel, target: Channel) {
        let response = context.channel.allocator.buffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")
        context.writeAndFlush(NIOAny(response), promise: nil)
        do {
            try target.pipeline.syncOperations.addHandler(SpliceHandler(partner: client))
            try context.pipeline.syncOperations.addHandler(SpliceHandler(partner: target), position: .after(self))
            // This handler first, then the decoder: bytes it read past the head go on to the splice.
            let pipeline = context.pipeline
            pipeline.syncOperations.removeHandler(context: context, promise: nil)
            pipeline.syncOperations.removeHandler(decoder, promise: nil)
        } catch {
            context.close(promise: nil)
            target.close(promise: nil)
        }
    }

    private func reply(_ context: ChannelHandlerContext, _ status: String, extra: String = "", close: Bool) {
        let text = "HTTP/1.1 \(status)\r\n\(extra)Content-Length: 0\r\nConnection: close\r\n\r\n"
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: text))).whenComplete { _ in
            if close { bound.value.close(promise: nil) }
        }
    }
}

/// Passes every byte read to the partner connection and closes it when this one closes.
private final class SpliceHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    private let partner: Channel

    init(partner: Channel) { self.partner = partner }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
