import NIOCore
import NIOHTTP2

/// On an FCM connection's pipeline after the HTTP/2 handler: a GOAWAY from the server retires the connection
/// (``FCMConnectionStreams/retire()``) and closes it if no stream is in flight; otherwise its last stream closes it.
final class FCMGoAwayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTP2Frame

    private let streams: FCMConnectionStreams

    init(streams: FCMConnectionStreams) {
        self.streams = streams
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway = unwrapInboundIn(data).payload, streams.retire() {
            context.close(promise: nil)
        }
    }
}
