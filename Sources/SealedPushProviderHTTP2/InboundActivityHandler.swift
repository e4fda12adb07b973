import NIOCore

/// On a provider connection's pipeline (APNs, FCM) right after TLS: counts what the connection reads, so a client
/// can tell a slow answer on a live connection from a connection that went silent — a request that timed out while
/// nothing at all arrived on its connection (no answer to any stream, no frame) means the peer or the path is gone
/// without a FIN (a NAT's dropped mapping, a vanished host), and the connection is closed instead of handed the next
/// request. Confined to the channel's event loop: read ``reads`` there.
package final class InboundActivityHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    package typealias InboundIn = NIOAny

    /// Reads so far (decrypted TLS records passed on).
    package private(set) var reads = 0

    package init() {}

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reads &+= 1
        context.fireChannelRead(data)
    }
}
