import NIOCore
import SealedPushCore

/// First on a provider connection's pipeline (APNs, FCM) when it goes through a ``ProviderProxy``: the socket is
/// connected to the proxy; this handler asks it for a tunnel (`CONNECT host:port HTTP/1.1`, RFC 9110 §9.3.6) and
/// holds back the connection's activation from the handlers behind it (TLS, HTTP/2) until the proxy answered 2xx.
/// Then it lets them start — TLS's handshake goes to the provider through the tunnel — and leaves the pipeline.
///
/// Any other answer, a closed connection or an answer head over 16 KiB fails the connection with a
/// ``ProxyTunnelError`` (the readiness wait reports it; the connect timeout bounds the whole exchange).
/// Confined to the channel's event loop.
package final class ProxyTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler, @unchecked Sendable {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    /// The most bytes of the proxy's answer head read.
    static let maxAnswerHeadBytes = 16_384

    private enum State {
        case waitingForActive
        case connectSent
        case tunnelOpen
        case failed
    }

    private let proxy: ProviderProxy
    private let target: String
    private var state = State.waitingForActive
    private var answer: ByteBuffer?
    private var heldWrites: [(NIOAny, EventLoopPromise<Void>?)] = []
    /// This side closed the connection before the answer (the connect timeout gave up on the proxy).
    private var closedHere = false

    /// - Parameters:
    ///   - proxy: The proxy the channel connects to.
    ///   - targetHost: The provider's host.
    ///   - targetPort: The provider's port.
    package init(proxy: ProviderProxy, targetHost: String, targetPort: Int) {
        self.proxy = proxy
        self.target = ProviderProxy.authority(host: targetHost, port: targetPort)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendConnect(context: context) }
    }

    package func channelActive(context: ChannelHandlerContext) {
        sendConnect(context: context)  // the handlers behind see the channel active once the tunnel is open
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .connectSent = state else {
            if case .tunnelOpen = state { context.fireChannelRead(data) }
            return
        }
        var bytes = unwrapInboundIn(data)
        if answer == nil { answer = bytes } else { answer!.writeBuffer(&bytes) }
        guard let head = answer, let end = head.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if (answer?.readableBytes ?? 0) > Self.maxAnswerHeadBytes {
                fail(context, "answered CONNECT with more than \(Self.maxAnswerHeadBytes) bytes and no end of its header")
            }
            return
        }
        let headLength = end.upperBound - head.readableBytesView.startIndex
        let statusLine = head.getString(at: head.readerIndex, length: min(headLength, 200)).flatMap {
            $0.split(separator: "\r\n", maxSplits: 1).first.map(String.init)
        } ?? ""
        let fields = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/1."), let status = Int(fields[1]) else {
            fail(context, "did not answer CONNECT in HTTP/1.1 (got '\(Self.printable(statusLine))')")
            return
        }
        guard (200..<300).contains(status) else {
            let reason = fields.count > 2 ? " " + Self.printable(String(fields[2])) : ""
            let hint =
                switch status {
                case 407: proxy.username == nil
                    ? ": it wants a user name and password, and none were given"
                    : ": it refused the user name and password given"
                case 403: ": it does not allow tunnels to this host or port"
                default: ""
                }
            fail(context, "refused the tunnel: \(status)\(reason)\(hint)")
            return
        }
        // RFC 9110 §9.3.6: whatever follows the blank line of a 2xx answer is the tunnel's.
        var rest = head
        rest.moveReaderIndex(forwardBy: headLength)
        answer = nil
        state = .tunnelOpen
        for (data, promise) in heldWrites { context.write(data, promise: promise) }
        heldWrites.removeAll()
        context.fireChannelActive()
        if rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        switch state {
        case .waitingForActive, .connectSent:
            fail(
                context,
                closedHere
                    ? "did not answer CONNECT within the connect timeout"
                    : "closed the connection before answering CONNECT")
        case .tunnelOpen, .failed:
            break
        }
        context.fireChannelInactive()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch state {
        case .tunnelOpen: context.write(data, promise: promise)
        case .waitingForActive, .connectSent: heldWrites.append((data, promise))
        case .failed: promise?.fail(ChannelError.ioOnClosedChannel)
        }
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if case .connectSent = state { closedHere = true }
        context.close(mode: mode, promise: promise)
    }

    package func flush(context: ChannelHandlerContext) {
        if case .tunnelOpen = state { context.flush() }  // held writes are flushed when the tunnel opens
    }

    private func sendConnect(context: ChannelHandlerContext) {
        guard case .waitingForActive = state else { return }
        state = .connectSent
        var request = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
        if let authorization = proxy.authorization { request += "Proxy-Authorization: \(authorization)\r\n" }
        request += "\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
    }

    private func fail(_ context: ChannelHandlerContext, _ what: String) {
        if case .failed = state { return }
        state = .failed
        answer = nil
        let error = ProxyTunnelError("the proxy \(proxy) \(what) (asking for a tunnel to \(target))")
        for (_, promise) in heldWrites { promise?.fail(error) }
        heldWrites.removeAll()
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }

    /// Text from the proxy, shortened and without control characters, for a message.
    private static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.prefix(120).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}

/// A provider connection's proxy did not open its tunnel: what it answered, with the proxy (never its password) and
/// the target.
package struct ProxyTunnelError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
