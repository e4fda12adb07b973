import Foundation
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import SealedPushCore
import SealedPushProviderHTTP2

/// One HTTP/2 request's answer.
struct FCMWireResponse: Sendable {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
}

/// How one attempt ended.
enum FCMAttemptOutcome: Sendable {
    /// An answer arrived.
    case response(FCMWireResponse)
    /// No answer by the deadline (the stream was reset).
    case timedOut
    /// The stream could not be opened or the connection closed before an answer.
    case lost(String)
}

/// One TLS + HTTP/2 connection (ALPN `h2`) to one endpoint, shared by concurrent requests (one stream each).
///
/// ``connect(endpoint:sslContext:group:timeout:proxy:)`` returns once the opening exchange is over (TLS chose `h2`, both
/// sides' SETTINGS are acknowledged; `HTTP2ReadinessHandler`), so a request's deadline never overlaps it.
///
/// A stream that got its whole answer is left to close by itself (both sides ended it); only a request that timed
/// out resets its stream. After the server's GOAWAY the connection takes no new requests (``isUsable`` is false, so
/// the slot makes a new one) and closes once its last stream ends. A request that timed out while the connection read
/// nothing at all retires it the same way: the peer or the path may be gone without a FIN, and the next request gets
/// a new connection.
final class FCMHTTP2Connection: @unchecked Sendable {
    let channel: Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let streams: FCMConnectionStreams
    private let activity: InboundActivityHandler
    let authority: String

    private init(
        channel: Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer, streams: FCMConnectionStreams,
        activity: InboundActivityHandler, authority: String
    ) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.streams = streams
        self.activity = activity
        self.authority = authority
    }

    /// Open and not retired (no GOAWAY from the server, no request timed out on it in silence): new requests may
    /// use it.
    var isUsable: Bool { channel.isActive && !streams.isRetired }

    /// Connects (through `proxy`'s tunnel when there is one), and waits for TLS and HTTP/2's opening exchange.
    /// - Parameters:
    ///   - timeout: The whole of it: TCP connect, the proxy's answer, TLS handshake, SETTINGS and their
    ///     acknowledgement.
    ///   - proxy: An HTTP proxy to tunnel through (`CONNECT`), or nil.
    /// - Throws: When it could not connect, TLS did not choose `h2`, or the exchange was not over within `timeout`.
    static func connect(
        endpoint: FCMEndpoint, sslContext: NIOSSLContext, group: EventLoopGroup, timeout: Duration,
        proxy: ProviderProxy?
    ) async throws -> FCMHTTP2Connection {
        let timeAmount = TimeAmount.nanoseconds(nanoseconds(timeout))
        let serverHostname = endpoint.isIPAddress ? nil : endpoint.host
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeAmount)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        let streams = FCMConnectionStreams()
        let activity = InboundActivityHandler()
        let (channel, multiplexer, ready) = try await bootstrap.connect(
            host: proxy?.host ?? endpoint.host, port: proxy?.port ?? endpoint.port
        ) { channel in
            channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                if let proxy {
                    try sync.addHandler(ProxyTunnelHandler(proxy: proxy, targetHost: endpoint.host, targetPort: endpoint.port))
                }
                try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                try sync.addHandler(activity)
                try sync.addHandler(FlushCoalescingHandler())
                var connection = NIOHTTP2Handler.ConnectionConfiguration()
                connection.initialSettings = [
                    HTTP2Setting(parameter: .maxConcurrentStreams, value: 0),
                    HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
                    HTTP2Setting(parameter: .enablePush, value: 0),
                ]
                let multiplexer = try sync.configureHTTP2Pipeline(
                    mode: .client, connectionConfiguration: connection, streamConfiguration: .init()
                ) { stream in stream.close() }
                let readiness = HTTP2ReadinessHandler(eventLoop: channel.eventLoop)
                try sync.addHandler(readiness)
                try sync.addHandler(FCMGoAwayHandler(streams: streams))
                return (channel, multiplexer, readiness.ready)
            }
        }
        // The connect timeout covers the TLS handshake and the SETTINGS exchange too.
        try await HTTP2ReadinessHandler.wait(for: ready, on: channel, timeout: timeAmount)
        return FCMHTTP2Connection(
            channel: channel, multiplexer: multiplexer, streams: streams, activity: activity,
            authority: endpoint.authority)
    }

    /// Sends one request on a new stream and waits for the whole answer, at most `timeout`.
    func execute(
        method: String, path: String, headers extra: [(String, String)], body: [UInt8], timeout: Duration
    ) async -> FCMAttemptOutcome {
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: FCMAttemptOutcome.self)
        let handler = FCMStreamHandler(promise: promise)
        var headers = HPACKHeaders()
        headers.add(name: ":method", value: method)
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: authority)
        headers.add(name: ":path", value: path)
        for (name, value) in extra { headers.add(name: name, value: value) }
        headers.add(name: "content-length", value: "\(body.count)")
        let multiplexer = self.multiplexer
        let timeAmount = TimeAmount.nanoseconds(Self.nanoseconds(timeout))
        let requestHeaders = headers
        let streams = self.streams
        let channel = self.channel
        let activity = self.activity
        loop.execute {
            guard channel.isActive else {
                handler.finish(.lost("the connection is closed"))
                return
            }
            guard !streams.isRetired else {
                handler.finish(.lost("the connection is retired (a GOAWAY, or a request timed out with nothing read)"))
                return
            }
            streams.opened()
            let readsBefore = activity.reads
            let timer = loop.scheduleTask(in: timeAmount) {
                // Silent for the whole deadline: the peer or the path may be gone without a FIN. Retire the
                // connection (the slot makes a new one; this one closes after its last stream, this one included).
                if activity.reads == readsBefore { _ = streams.retire() }
                handler.finish(.timedOut)
            }
            promise.futureResult.whenComplete { _ in
                timer.cancel()
                if streams.ended() { channel.close(promise: nil) }  // the last stream of a retired connection
            }
            multiplexer.createStreamChannel { stream in
                stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(handler) }
            }.whenComplete { result in
                switch result {
                case .failure(let error):
                    handler.finish(.lost("stream not opened: \(error)"))
                case .success(let stream):
                    promise.futureResult.whenComplete { result in
                        // A timed-out request resets its stream (RST_STREAM CANCEL). One that was answered is not
                        // reset: both sides ended it, and a reset of a closed stream counts against the connection
                        // at servers that defend against HTTP/2 rapid reset (they end it with GOAWAY).
                        if case .success(.timedOut) = result { stream.close(promise: nil) }
                    }
                    var buffer = stream.allocator.buffer(capacity: body.count)
                    buffer.writeBytes(body)
                    stream.write(HTTP2Frame.FramePayload.headers(.init(headers: requestHeaders, endStream: false)), promise: nil)
                    stream.writeAndFlush(
                        HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(buffer), endStream: true)), promise: nil)
                }
            }
        }
        do {
            return try await promise.futureResult.get()
        } catch {
            return .lost("\(error)")
        }
    }

    func close() { channel.close(promise: nil) }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
            ? Int64.max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Collects one stream's answer; finishes its promise exactly once.
final class FCMStreamHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame.FramePayload

    /// The largest answer body kept (FCM's are well under 1 KB).
    static let maximumBodyBytes = 64 * 1024

    private let promise: EventLoopPromise<FCMAttemptOutcome>
    private let lock = NSLock()
    private var finished = false
    private var status: Int?
    private var headers: [String: String] = [:]
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<FCMAttemptOutcome>) {
        self.promise = promise
    }

    func finish(_ outcome: FCMAttemptOutcome) {
        let first = lock.withLock { () -> Bool in
            defer { finished = true }
            return !finished
        }
        if first { promise.succeed(outcome) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            for (name, value, _) in frame.headers {
                if name == ":status" { status = Int(value) } else { headers[name] = value }
            }
            if frame.endStream { complete() }
        case .data(let frame):
            if case .byteBuffer(var buffer) = frame.data {
                let room = Self.maximumBodyBytes - body.count
                if room > 0, let bytes = buffer.readBytes(length: min(room, buffer.readableBytes)) { body += bytes }
            }
            if frame.endStream { complete() }
        case .rstStream(let code):
            finish(.lost("stream reset by the server (\(code))"))
        default:
            break
        }
    }

    private func complete() {
        guard let status else {
            finish(.lost("an answer without :status"))
            return
        }
        finish(.response(FCMWireResponse(status: status, headers: headers, body: body)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.lost("the connection closed before an answer"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.lost("\(error)"))
        context.close(promise: nil)
    }
}
