import NIOCore
import NIOEmbedded
import Testing

import SealedPushCore
import SealedPushProviderHTTP2

/// `ProxyTunnelHandler`: the `CONNECT` request it writes, the connection's activation held back from TLS until the
/// proxy's 2xx, and every other answer failing the connection with what the proxy said.
@Suite struct ProxyTunnelHandlerTests {
    /// Stands where TLS is: records whether it saw the channel active, what it read, and the errors passed on.
    final class NextHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        var active = false
        var read: [String] = []
        var errors: [String] = []

        func channelActive(context: ChannelHandlerContext) {
            active = true
            context.writeAndFlush(NIOAny(ByteBuffer(string: "client hello")), promise: nil)
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { read.append(String(buffer: unwrapInboundIn(data))) }
        func errorCaught(context: ChannelHandlerContext, error: Error) { errors.append("\(error)") }
    }

    private func connected(_ proxy: ProviderProxy) throws -> (EmbeddedChannel, NextHandler) {
        let next = NextHandler()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            ProxyTunnelHandler(proxy: proxy, targetHost: "api.push.apple.com", targetPort: 443))
        try channel.pipeline.syncOperations.addHandler(next)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
        return (channel, next)
    }

    private func written(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    @Test func asksForTheTunnelAndStartsTLSOnlyAfterA2xx() throws {
        let (channel, next) = try connected(try ProviderProxy(url: "http://gw:s3cret@proxy.internal:3128"))
        #expect(try written(channel) == """
            CONNECT api.push.apple.com:443 HTTP/1.1\r
            Host: api.push.apple.com:443\r
            Proxy-Authorization: Basic Z3c6czNjcmV0\r
            \r

            """)
        #expect(!next.active, "TLS must not start before the proxy answered")
        // The answer in pieces, a header field and the first tunnelled bytes in the same read as the blank line.
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 Connection est"))
        #expect(!next.active)
        try channel.writeInbound(ByteBuffer(string: "ablished\r\nVia: 1.1 proxy\r\n\r\nserver bytes"))
        #expect(next.active)
        #expect(next.read == ["server bytes"])
        #expect(try written(channel) == "client hello")
        #expect(throws: ChannelPipelineError.self) { try channel.pipeline.syncOperations.context(handlerType: ProxyTunnelHandler.self) }
        try channel.writeInbound(ByteBuffer(string: "more"))
        #expect(next.read == ["server bytes", "more"])
        _ = try channel.finish()
    }

    @Test(arguments: [
        ("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n", "407 Proxy Authentication Required: it refused the user name and password given"),
        ("HTTP/1.1 403 Forbidden\r\n\r\n", "403 Forbidden: it does not allow tunnels to this host or port"),
        ("HTTP/1.0 502 Bad Gateway\r\n\r\n", "refused the tunnel: 502 Bad Gateway"),
        ("SSH-2.0-OpenSSH\r\n\r\n", "did not answer CONNECT in HTTP/1.1"),
    ])
    func anotherAnswerFailsTheConnectionWithWhatTheProxySaid(answer: String, expected: String) throws {
        let (channel, next) = try connected(try ProviderProxy(url: "http://gw:s3cret@proxy.internal:3128"))
        _ = try written(channel)
        try channel.writeInbound(ByteBuffer(string: answer))
        #expect(!next.active)
        #expect(next.errors.count == 1)
        let message = next.errors.first ?? ""
        #expect(message.contains(expected), "\(message)")
        #expect(message.contains("http://gw:…@proxy.internal:3128") && message.contains("api.push.apple.com:443"))
        #expect(!message.contains("s3cret"))
        #expect(!channel.isActive, "the connection must be closed")
    }

    @Test func aProxyWithoutCredentialsIsToldItWantsThem() throws {
        let (channel, next) = try connected(try ProviderProxy(url: "http://proxy.internal:3128"))
        #expect(try !written(channel).contains("Proxy-Authorization"))
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"))
        #expect(next.errors.first?.contains("407 Proxy Authentication Required: it wants a user name and password, and none were given") == true)
    }

    @Test func anEndlessHeadIsCutAtItsLimit() throws {
        let (channel, next) = try connected(try ProviderProxy(url: "http://proxy.internal:3128"))
        _ = try written(channel)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\n"))
        for _ in 0..<20 { _ = try? channel.writeInbound(ByteBuffer(string: "X-Filler: " + String(repeating: "a", count: 1_000) + "\r\n")) }
        #expect(!next.active)
        #expect(next.errors.count == 1)
        #expect(next.errors.first?.contains("more than 16384 bytes") == true)
    }

    @Test func aProxyThatClosesBeforeAnsweringIsNamed() throws {
        let (channel, next) = try connected(try ProviderProxy(url: "http://proxy.internal:3128"))
        _ = try written(channel)
        channel.pipeline.fireChannelInactive()
        #expect(next.errors.first?.contains("closed the connection before answering CONNECT") == true)
        #expect(!next.active)
    }

    @Test func aProxyGivenUpOnByTheConnectTimeoutIsNamedSo() throws {
        let (channel, next) = try connected(try ProviderProxy(url: "http://proxy.internal:3128"))
        _ = try written(channel)
        channel.close(promise: nil)  // what the readiness wait does when the connect timeout passes
        channel.embeddedEventLoop.run()
        #expect(next.errors.first?.contains("did not answer CONNECT within the connect timeout") == true, "\(next.errors)")
        #expect(!next.active)
    }

    @Test func anIPv6TargetIsBracketed() throws {
        let next = NextHandler()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            ProxyTunnelHandler(proxy: try ProviderProxy(url: "http://[::1]:3128"), targetHost: "fd00::5", targetPort: 8443))
        try channel.pipeline.syncOperations.addHandler(next)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
        #expect(try written(channel).hasPrefix("CONNECT [fd00::5]:8443 HTTP/1.1\r\nHost: [fd00::5]:8443\r\n"))
    }
}
