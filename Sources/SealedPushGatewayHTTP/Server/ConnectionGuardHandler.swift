import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Ends connections the gateway has refused or that asked to close, and answers the requests refused before the
/// router with the contract's `Error` object.
///
/// Sits in each HTTP/1.1 connection's pipeline after the HTTP codec (``GatewayHTTP1Channel`` puts it there):
/// - A response written before its request's body has ended (a refusal while the body is still arriving: `413`,
///   `401`, …) gets `Connection: close`; it is written, then the connection's output is shut (the client sees the
///   answer and the end), then at most ``lingerBytes`` more of the client's bytes are discarded — so that closing does
///   not reset the connection under an answer the client has not read yet — and the connection is closed. Without
///   this, Hummingbird reads and discards the rest of the body to reach the next request, without bound.
/// - The response to a request that asked to close (`Connection: close`, which ``RequestHeadCheckHandler`` also sets
///   on an HTTP/1.0 request without `keep-alive`) gets `Connection: close`, and the connection closes the same way
///   once it is written (RFC 9112 §9.3, §9.6).
/// - A request refused before the router is answered here, in its turn (after the responses to the requests read
///   before it, unless one of those closes the connection), with `Connection: close`; then the connection closes as
///   above, and nothing read after it reaches the router. Such are an HTTP parse error between requests (a header over
///   the limits, too many headers, a bad `Content-Length` or chunk: `400 malformedRequest`), a method the parser does
///   not know (`501 methodNotImplemented` naming it, from the request line ``ParserInputWindow`` shows — read on, up to
///   ``refusedLineLimit`` bytes and ``refusedLineWait``, when the parser refused it before the line ended), and a
///   ``RequestRefusal`` of ``RequestHeadCheckHandler`` (`Host`, `Transfer-Encoding`). A parse error inside a request's
///   body goes to its handler (which answers `400` and closes through the first rule).
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

        var isOpen: Bool {
            if case .open = self { return true }
            return false
        }
    }

    /// The longest request line read on, after the parser refused its method before the line ended, to name the method.
    static let refusedLineLimit = 8_192
    /// The longest wait for the rest of such a line; then the refusal is answered without naming a method.
    static let refusedLineWait = TimeAmount.seconds(1)

    /// The most bytes read and dropped after a refusal before the connection is closed outright.
    let lingerBytes: Int
    /// How long the connection may linger after a refusal.
    let lingerTime: TimeAmount
    /// What shows the bytes the HTTP parser refused (to name an unknown method); nil: no method is named.
    private let parserInput: ParserInputWindow?
    private var state = State.open
    /// Requests whose head was read and whose response has not ended.
    private var requestsOpen = 0
    /// Whether the last request read has ended (its `.end` part arrived).
    private var requestEnded = true
    /// Request heads read, and responses ended, on this connection.
    private var requestsRead = 0
    private var responsesEnded = 0
    /// Which request (its number in ``requestsRead``) asked to close the connection after its response.
    private var closingRequest: Int?
    /// Whether this handler refused a request itself: the connection ends with that answer, and nothing read after it
    /// reaches the router.
    private var refused = false
    /// The refusal to write once the responses before it have ended.
    private var pendingRefusal: RequestRefusal?

    /// - Parameters:
    ///   - parserInput: What shows the bytes the HTTP parser is parsing (placed before the decoder); nil: a method
    ///     the parser does not know is answered `400` without being named.
    ///   - lingerBytes: The most bytes dropped after a refusal.
    ///   - lingerTime: The most time spent dropping them.
    init(parserInput: ParserInputWindow? = nil, lingerBytes: Int = 65_536, lingerTime: TimeAmount = .seconds(2)) {
        self.parserInput = parserInput
        self.lingerBytes = lingerBytes
        self.lingerTime = lingerTime
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch state {
        case .open, .closingAfterResponse:
            // After a refusal of this handler's: the connection ends with it.
            if refused { return }
            switch part {
            case .head(let request):
                requestsOpen += 1
                requestsRead += 1
                requestEnded = false
                if closingRequest == nil, request.headerFields[.connection] == "close" { closingRequest = requestsRead }
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
            // bound. Close instead. The same once the request that asked to close is answered.
            if !requestEnded || responsesEnded + 1 == closingRequest { head.headerFields[.connection] = "close" }
            if head.headerFields[.connection]?.lowercased() == "close" { state = .closingAfterResponse }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            requestsOpen = max(0, requestsOpen - 1)
            responsesEnded += 1
            guard case .closingAfterResponse = state else {
                context.write(data, promise: promise)
                // A refusal waiting for the responses before it: its turn.
                if requestsOpen == 0, let refusal = pendingRefusal {
                    pendingRefusal = nil
                    answer(refusal, context: context)
                }
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
        let aboutRequests = error is RequestRefusal || error is HTTPParserError || error is ByteToMessageDecoderError
        // After a refusal (or while the connection closes anyway): what is said of the bytes after it does not matter.
        if aboutRequests, refused || (error is RequestRefusal && !state.isOpen) { return }
        guard state.isOpen, requestEnded, let refusal = refusal(for: error) else {
            // Inside a request: its handler reads the error from the body and answers (then closes). Or not about
            // requests at all.
            context.fireErrorCaught(error)
            return
        }
        refused = true
        if case .invalidMethod? = error as? HTTPParserError, let parserInput, parserInput.unrecognizedMethod == nil {
            // The method's request line had not ended in the refused read: name the method once it does.
            parserInput.awaitRefusedLine(limit: Self.refusedLineLimit, within: Self.refusedLineWait, on: context.eventLoop)
            { [self] method in
                let named = method.map { RequestRefusal(error: .methodNotImplemented($0), withoutBody: false) }
                deliver(named ?? refusal, context: context)
            }
            return
        }
        deliver(refusal, context: context)
    }

    /// Answers a refusal now, or after the responses to the requests read before it.
    private func deliver(_ refusal: RequestRefusal, context: ChannelHandlerContext) {
        if requestsOpen == 0 {
            answer(refusal, context: context)
        } else {
            pendingRefusal = refusal  // after the responses to the requests read before it
        }
    }

    /// The answer to a request refused before the router.
    /// - Parameter error: An error that came down the pipeline.
    /// - Returns: The refusal it is (a ``RequestRefusal``) or stands for (an `HTTPParserError`); nil for other errors.
    private func refusal(for error: any Error) -> RequestRefusal? {
        if let refusal = error as? RequestRefusal { return refusal }
        guard let parserError = error as? HTTPParserError else { return nil }
        if case .invalidMethod = parserError, let method = parserInput?.unrecognizedMethod {
            return RequestRefusal(error: .methodNotImplemented(method), withoutBody: false)
        }
        return RequestRefusal(error: .malformed(Self.message(for: parserError)), withoutBody: false)
    }

    /// Writes a refusal's answer with `Connection: close` (then the connection closes once it is written).
    /// - Parameters:
    ///   - refusal: The refusal.
    ///   - context: This handler's context.
    private func answer(_ refusal: RequestRefusal, context: ChannelHandlerContext) {
        let body = refusal.error.body
        var fields: HTTPFields = [.contentType: "application/json", .connection: "close"]
        fields[.contentLength] = String(body.count)
        requestsOpen += 1  // the refusal's own response, ended below
        let head = HTTPResponse(status: refusal.error.status, headerFields: fields)
        write(context: context, data: wrapOutboundOut(.head(head)), promise: nil)
        if !refusal.withoutBody {
            let buffer = context.channel.allocator.buffer(bytes: body)
            write(context: context, data: wrapOutboundOut(.body(buffer)), promise: nil)
        }
        write(context: context, data: wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// What was wrong with a request the HTTP/1.1 parser refused, as precisely as the parser says.
    static func message(for error: HTTPParserError) -> String {
        let what: String
        switch error {
        case .invalidMethod:
            what = "its request line is not `METHOD target HTTP/1.1` with a method this server knows (the API uses "
                + "GET, HEAD, PUT, POST and DELETE)"
        case .headerOverflow:
            what = "its headers are over the limits (their size or their number)"
        case .invalidContentLength, .unexpectedContentLength:
            what = "its Content-Length is not valid (one decimal length, given once, and not with a Transfer-Encoding)"
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
