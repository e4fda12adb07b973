import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Ends connections the gateway has refused, and answers malformed requests with the contract's `Error` object.
///
/// Sits in each HTTP/1.1 connection's pipeline after the HTTP codec (Hummingbird's `additionalChannelHandlers`):
/// - A response written before its request's body has ended (a refusal while the body is still arriving: `413`,
///   `401`, …) gets `Connection: close`; it is written, then the connection's output is shut (the client sees the
///   answer and the end), then at most ``lingerBytes`` more of the client's bytes are discarded — so that closing does
///   not reset the connection under an answer the client has not read yet — and the connection is closed. Without
///   this, Hummingbird reads and discards the rest of the body to reach the next request, without bound.
/// - An HTTP parse error between requests (a header over the limits, too many headers, a bad `Content-Length` or
///   `Transfer-Encoding`) gets `400 malformedRequest` as JSON, then the connection closes. A parse error inside a
///   request's body goes to its handler (which answers `400` and closes through the first rule).
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        case open
        /// A response with `Connection: close` is being written.
        case closingAfterResponse
        /// The output is shut; inbound bytes are counted and dropped.
        case lingering(discarded: Int)
        case closed
    }

    /// The most bytes read and dropped after a refusal before the connection is closed outright.
    let lingerBytes: Int
    /// How long the connection may linger after a refusal.
    let lingerTime: TimeAmount
    private var state = State.open
    /// Requests whose head was read and whose response has not ended.
    private var requestsOpen = 0
    /// Whether the last request read has ended (its `.end` part arrived).
    private var requestEnded = true

    /// - Parameters:
    ///   - lingerBytes: The most bytes dropped after a refusal.
    ///   - lingerTime: The most time spent dropping them.
    init(lingerBytes: Int = 65_536, lingerTime: TimeAmount = .seconds(2)) {
        self.lingerBytes = lingerBytes
        self.lingerTime = lingerTime
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch state {
        case .open, .closingAfterResponse:
            switch part {
            case .head:
                requestsOpen += 1
                requestEnded = false
            case .body: break
            case .end: requestEnded = true
            }
            context.fireChannelRead(data)
        case .lingering(let discarded):
            var size = 0
            if case .body(let buffer) = part { size = buffer.readableBytes }
            let total = discarded + size
            state = .lingering(discarded: total)
            if total > lingerBytes { closeNow(context) }
        case .closed:
            break
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        switch state {
        case .lingering, .closed:
            promise?.fail(ChannelError.outputClosed)
            return
        case .open, .closingAfterResponse:
            break
        }
        switch part {
        case .head(var head):
            // Answered before the body ended: Hummingbird would read the rest to reach the next request, without
            // bound. Close instead.
            if !requestEnded { head.headerFields[.connection] = "close" }
            if head.headerFields[.connection]?.lowercased() == "close" { state = .closingAfterResponse }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            requestsOpen = max(0, requestsOpen - 1)
            guard case .closingAfterResponse = state else {
                context.write(data, promise: promise)
                return
            }
            let written = context.eventLoop.makePromise(of: Void.self)
            if let promise { written.futureResult.cascade(to: promise) }
            context.writeAndFlush(data, promise: written)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in
                let (handler, context) = loopBound.value
                handler.linger(context)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, case .open = state, requestsOpen == 0 else {
            // Inside a request: its handler reads the error from the body and answers (then closes).
            context.fireErrorCaught(error)
            return
        }
        let body = GatewayAPIError.malformed(Self.message(for: parserError)).body
        var fields: HTTPFields = [.contentType: "application/json", .connection: "close"]
        fields[.contentLength] = String(body.count)
        state = .closingAfterResponse
        requestsOpen = 1
        write(context: context, data: wrapOutboundOut(.head(HTTPResponse(status: .badRequest, headerFields: fields))), promise: nil)
        write(context: context, data: wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: body))), promise: nil)
        write(context: context, data: wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// What was wrong with a request the HTTP/1.1 parser refused, as precisely as the parser says.
    static func message(for error: HTTPParserError) -> String {
        let what: String
        switch error {
        case .invalidMethod:
            what = "its method is not an HTTP method this server knows (the API uses GET, PUT, POST and DELETE)"
        case .headerOverflow:
            what = "its headers are over the limits (their size or their number)"
        case .invalidContentLength, .unexpectedContentLength:
            what = "its Content-Length is not valid (one decimal length, given once)"
        case .invalidChunkSize:
            what = "a chunk of its chunked body has a bad size"
        case .invalidVersion:
            what = "its HTTP version is not one this server speaks (HTTP/1.1 or HTTP/1.0)"
        case .invalidURL, .invalidPath, .invalidQueryString, .invalidFragment, .invalidHost, .invalidPort:
            what = "its request target is not a valid path"
        case .invalidHeaderToken, .invalidCharactersUsed:
            what = "a header's name or value holds characters HTTP does not allow"
        default:
            what = "a header over the limits, too many headers, or a bad Content-Length or Transfer-Encoding"
        }
        return "the request is not valid HTTP/1.1: " + what
    }

    /// After a refusal's answer: shut the output, drop what still arrives for a while, then close.
    private func linger(_ context: ChannelHandlerContext) {
        guard case .closingAfterResponse = state else { return }
        state = .lingering(discarded: 0)
        context.close(mode: .output, promise: nil)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: lingerTime) {
            let (handler, context) = loopBound.value
            handler.closeNow(context)
        }
    }

    private func closeNow(_ context: ChannelHandlerContext) {
        if case .closed = state { return }
        state = .closed
        context.close(promise: nil)
    }
}
