import NIOCore
import NIOHTTP1

/// Serves HTTP requests (HTTP/1.1 connections, or one HTTP/2 stream through `HTTP2FramePayloadToHTTP1ServerCodec`):
/// collects the request, lets the core decide, answers.
final class FCMEmulatorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let core: FCMEmulatorCore
    private let isHTTP2Stream: Bool
    private var request: FCMEmulatorRequest?
    private var keepAlive = true

    init(core: FCMEmulatorCore, isHTTP2Stream: Bool) {
        self.core = core
        self.isHTTP2Stream = isHTTP2Stream
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            keepAlive = head.isKeepAlive
            request = FCMEmulatorRequest(
                method: head.method.rawValue, path: head.uri, authorization: head.headers.first(name: "authorization"),
                body: [], bodyTooLarge: false)
        case .body(var buffer):
            guard var current = request else { return }
            let room = FCMMessageValidator.maximumBodyBytes - current.body.count
            if buffer.readableBytes > room { current.bodyTooLarge = true }
            if room > 0, let bytes = buffer.readBytes(length: min(room, buffer.readableBytes)) { current.body += bytes }
            request = current
        case .end:
            guard let current = request else { return }
            request = nil
            perform(core.handle(current), context: context)
        }
    }

    private func perform(_ action: FCMEmulatorAction, context: ChannelHandlerContext) {
        switch action {
        case .respond(let status, let headers, let body):
            var head = HTTPResponseHead(version: isHTTP2Stream ? .http2 : .http1_1, status: .init(statusCode: status))
            for (name, value) in headers { head.headers.add(name: name, value: value) }
            head.headers.add(name: "content-length", value: "\(body.count)")
            if !isHTTP2Stream, !keepAlive { head.headers.add(name: "connection", value: "close") }
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            let keep = keepAlive || isHTTP2Stream
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keep { loopBound.value.close(promise: nil) }
            }
        case .closeConnection:
            connection(context).close(promise: nil)
        case .noResponse:
            break
        case .stallConnection:
            connection(context).setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        case .delayed(let milliseconds, let then):
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(milliseconds))) {
                let context = loopBound.value
                guard context.channel.isActive else { return }
                handler.value.perform(then(), context: context)
            }
        }
    }

    /// The TCP connection: an HTTP/2 stream's parent, or this HTTP/1.1 channel (whose parent is the listener, which
    /// must stay open).
    private func connection(_ context: ChannelHandlerContext) -> any Channel {
        (isHTTP2Stream ? context.channel.parent : nil) ?? context.channel
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
