import NIOCore
import NIOPosix
import SealedPushCore
import SealedPushProviderHTTP2

/// `check`'s proxy line: asks the configured proxy for a tunnel to a provider, as delivery's connections do
/// (`ProxyTunnelHandler`), and closes it as soon as it is open — nothing is sent through it.
enum ProxyProbe {
    /// Opens and closes one tunnel.
    /// - Parameters:
    ///   - proxy: The proxy.
    ///   - host: The provider's host.
    ///   - port: The provider's port.
    ///   - timeout: The connection, and the proxy's answer (each).
    /// - Throws: The proxy's refusal (`ProxyTunnelError`, with its answer), a connection failure, or a timeout.
    static func tunnel(through proxy: ProviderProxy, to host: String, port: Int, timeout: TimeAmount) async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let opened = group.any().makePromise(of: Void.self)
        let channel: Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let sync = channel.pipeline.syncOperations
                        try sync.addHandler(ProxyTunnelHandler(proxy: proxy, targetHost: host, targetPort: port))
                        try sync.addHandler(TunnelOpened(promise: opened))
                    }
                }
                .connect(host: proxy.host, port: proxy.port).get()
        } catch {
            opened.fail(error)
            throw ProbeError("cannot connect to the proxy \(proxy): \(error)")
        }
        defer { channel.close(promise: nil) }
        // As delivery's connections wait: past the timeout the connection is closed, and the tunnel handler says so.
        try await HTTP2ReadinessHandler.wait(for: opened.futureResult, on: channel, timeout: timeout)
    }

    /// Succeeds its promise when the tunnel opened (the channel turns active behind the tunnel handler); fails it with
    /// the handler's error or the connection's end.
    private final class TunnelOpened: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private let promise: EventLoopPromise<Void>

        init(promise: EventLoopPromise<Void>) { self.promise = promise }

        func channelActive(context: ChannelHandlerContext) { promise.succeed(()) }
        func errorCaught(context: ChannelHandlerContext, error: Error) { promise.fail(error) }
        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(ProbeError("the proxy closed the connection"))
        }
    }

    struct ProbeError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
