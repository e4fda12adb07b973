import NIOCore

/// On a provider connection's pipeline (APNs, FCM) right after TLS: counts what the connection reads, so a client
/// can tell a slow answer on a live connection from a connection that went silent.
///
/// A request that reached its deadline while nothing at all arrived on its connection (no answer to any stream, no
/// frame) retires the connection: it takes no new requests and closes once its last stream ends. The peer or the
/// path may be gone without a FIN (a NAT's dropped mapping, a vanished host), and the next request should get a new
/// connection rather than wait out another deadline on this one; a server that is merely slow still answers the
/// streams it has. Confined to the channel's event loop: read ``reads`` there.
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
