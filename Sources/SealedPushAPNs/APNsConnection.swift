import Foundation
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import SealedPushCore
import SealedPushProviderHTTP2

/// A request ready for the wire.
struct APNsWireRequest: Sendable {
    var headers: HPACKHeaders
    var body: [UInt8]
}

/// An HTTP/2 response.
struct APNsWireResponse: Sendable {
    var status: Int
    var apnsID: String?
    var body: [UInt8]
}

/// How one request on one connection ended.
enum APNsAttemptOutcome: Sendable {
    /// APNs answered.
    case response(APNsWireResponse)
    /// No answer within the request timeout (the stream was reset).
    /// `silentConnection`: nothing at all arrived on the connection while the request waited — the peer or the path
    /// may be gone without a FIN, and the connection should take no more requests.
    case timedOut(silentConnection: Bool)
    /// The request certainly was not processed (stream never opened, or refused by GOAWAY/REFUSED_STREAM).
    case notProcessed(String)
    /// The connection or stream failed after the request was sent: it may have been processed.
    case lost(String)
}

/// Something that happened to a connection, reported to the pool.
enum APNsConnectionEvent: Sendable {
    case settings(maxConcurrentStreams: Int?)
    case goAway(lastStreamID: Int, reason: String?)
    case closed
}

/// One TLS + HTTP/2 connection to APNs. Mutable state is confined to the channel's event loop.
final class APNsConnection: @unchecked Sendable {
    let id: Int
    let channel: Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let state: APNsConnectionState

    /// Set when a GOAWAY arrives. Read and written on the channel's event loop only.
    var goAwayLastStreamID: HTTP2StreamID? { state.goAwayLastStreamID }

    private init(id: Int, channel: Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer, state: APNsConnectionState)
    {
        self.id = id
        self.channel = channel
        self.multiplexer = multiplexer
        self.state = state
    }

    /// Connects (through `proxy`'s tunnel when there is one: `ProxyTunnelHandler`), and waits for TLS (ALPN must
    /// select `h2`) and HTTP/2's opening exchange (`HTTP2ReadinessHandler`).
    static func connect(
        id: Int, endpoint: APNsEndpoint, sslContext: NIOSSLContext, group: EventLoopGroup, timeout: Duration,
        proxy: ProviderProxy?, logger: Logger, events: @escaping @Sendable (APNsConnectionEvent) -> Void
    ) async throws -> APNsConnection {
        let timeAmount = TimeAmount.nanoseconds(Self.nanoseconds(timeout))
        let serverHostname = endpoint.isIPAddress ? nil : endpoint.host
        let state = APNsConnectionState()
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeAmount)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        let (channel, multiplexer, ready) = try await bootstrap.connect(
            host: proxy?.host ?? endpoint.host, port: proxy?.port ?? endpoint.port
        ) { channel in
            channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                if let proxy {
                    try sync.addHandler(ProxyTunnelHandler(proxy: proxy, targetHost: endpoint.host, targetPort: endpoint.port))
                }
                try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                try sync.addHandler(state.activity)
                try sync.addHandler(FlushCoalescingHandler())
                var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
                connectionConfiguration.initialSettings = [
                    HTTP2Setting(parameter: .maxConcurrentStreams, value: 0),  // no server push
                    HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
                    HTTP2Setting(parameter: .enablePush, value: 0),
                ]
                connectionConfiguration.maximumConnectionGlitches = 100_000
                var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
                streamConfiguration.streamResetFrameRateLimit.maximumCount = 100_000
                streamConfiguration.streamResetFrameRateLimit.windowLength = .seconds(1)
                streamConfiguration.streamErrorRateLimit.maximumCount = 100_000
                streamConfiguration.streamErrorRateLimit.windowLength = .seconds(1)
                let multiplexer = try sync.configureHTTP2Pipeline(
                    mode: .client, connectionConfiguration: connectionConfiguration,
                    streamConfiguration: streamConfiguration
                ) { stream in
                    stream.close()  // APNs never pushes
                }
                let readiness = HTTP2ReadinessHandler(eventLoop: channel.eventLoop)
                try sync.addHandler(readiness)
                try sync.addHandler(APNsConnectionHandler(state: state, events: events, logger: logger))
                return (channel, multiplexer, readiness.ready)
            }
        }
        let connection = APNsConnection(id: id, channel: channel, multiplexer: multiplexer, state: state)
        try await HTTP2ReadinessHandler.wait(for: ready, on: channel, timeout: timeAmount)
        return connection
    }

    /// Sends one request and waits for its answer, at most `timeout`. Never throws.
    func execute(_ request: APNsWireRequest, timeout: Duration) async -> APNsAttemptOutcome {
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: APNsAttemptOutcome.self)
        let handler = APNsStreamHandler(connection: self, promise: promise)
        let multiplexer = self.multiplexer
        let timeAmount = TimeAmount.nanoseconds(Self.nanoseconds(timeout))
        let activity = state.activity
        loop.execute {
            let readsBefore = activity.reads
            guard self.goAwayLastStreamID == nil, self.channel.isActive else {
                handler.finish(.notProcessed("connection is closing"))
                return
            }
            multiplexer.createStreamChannel { stream in
                stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(handler) }
            }.whenComplete { result in
                switch result {
                case .failure(let error):
                    handler.finish(.notProcessed("stream not opened: \(error)"))
                case .success(let stream):
                    var buffer = stream.allocator.buffer(capacity: request.body.count)
                    buffer.writeBytes(request.body)
                    stream.write(
                        HTTP2Frame.FramePayload.headers(.init(headers: request.headers, endStream: false)), promise: nil
                    )
                    stream.writeAndFlush(
                        HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(buffer), endStream: true)), promise: nil)
                    let timer = loop.scheduleTask(in: timeAmount) {
                        handler.finish(.timedOut(silentConnection: activity.reads == readsBefore))
                        stream.close(promise: nil)  // RST_STREAM(CANCEL)
                    }
                    promise.futureResult.whenComplete { _ in timer.cancel() }
                }
            }
        }
        do {
            return try await promise.futureResult.get()
        } catch {
            return .lost("\(error)")
        }
    }

    /// Closes the connection.
    func close() {
        channel.close(promise: nil)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
            ? Int64.max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Connection state shared by the connection handler and `APNsConnection`; confined to the event loop.
final class APNsConnectionState: @unchecked Sendable {
    var goAwayLastStreamID: HTTP2StreamID?
    /// What the connection read: a request that timed out while it read nothing retires the connection.
    let activity = InboundActivityHandler()
}

/// On the connection's pipeline after the HTTP/2 handler and its readiness handler: watches SETTINGS and GOAWAY,
/// reports closure and closes the connection on an error.
final class APNsConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame

    private let state: APNsConnectionState
    private let events: @Sendable (APNsConnectionEvent) -> Void
    private let logger: Logger

    init(state: APNsConnectionState, events: @escaping @Sendable (APNsConnectionEvent) -> Void, logger: Logger) {
        self.state = state
        self.events = events
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let settings)):
            let limit = settings.last { $0.parameter == .maxConcurrentStreams }?.value
            events(.settings(maxConcurrentStreams: limit))
        case .goAway(let lastStreamID, let errorCode, let opaqueData):
            state.goAwayLastStreamID = lastStreamID
            var reason: String?
            if var data = opaqueData, let bytes = data.readBytes(length: min(data.readableBytes, 1024)),
                let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
            {
                reason = object["reason"] as? String
            }
            logger.info(
                "APNs GOAWAY",
                metadata: [
                    "last-stream-id": "\(lastStreamID)", "error": "\(errorCode)", "reason": "\(reason ?? "-")",
                ])
            events(.goAway(lastStreamID: Int(lastStreamID), reason: reason))
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        events(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.debug("APNs connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }
}

/// One request stream: collects the answer; reports exactly one outcome.
final class APNsStreamHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    static let maximumResponseBody = 16_384

    private let connection: APNsConnection
    private let promise: EventLoopPromise<APNsAttemptOutcome>
    private var finished = false
    private var status: Int?
    private var apnsID: String?
    private var body: [UInt8] = []

    init(connection: APNsConnection, promise: EventLoopPromise<APNsAttemptOutcome>) {
        self.connection = connection
        self.promise = promise
    }

    /// Completes the attempt once; later calls are ignored. Must run on the event loop.
    func finish(_ outcome: APNsAttemptOutcome) {
        guard !finished else { return }
        finished = true
        promise.succeed(outcome)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if status == nil {
                status = headers.headers.first(name: ":status").flatMap { Int($0) }
                apnsID = headers.headers.first(name: "apns-id")
            }
            if headers.endStream { complete() }
        case .data(let data):
            if case .byteBuffer(var buffer) = data.data {
                let room = Self.maximumResponseBody - body.count
                if room > 0, let bytes = buffer.readBytes(length: min(room, buffer.readableBytes)) { body += bytes }
            }
            if data.endStream { complete() }
        default:
            break
        }
    }

    private func complete() {
        guard let status else {
            finish(.lost("response without :status"))
            return
        }
        finish(.response(APNsWireResponse(status: status, apnsID: apnsID, body: body)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        failWithoutAnswer(context: context, error: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        failWithoutAnswer(context: context, error: error)
        context.close(promise: nil)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failWithoutAnswer(context: context, error: nil)
    }

    private func failWithoutAnswer(context: ChannelHandlerContext, error: Error?) {
        guard !finished else { return }
        let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        let refused = (error as? NIOHTTP2Errors.StreamClosed)?.errorCode == .refusedStream
        // Classify on the next tick so a GOAWAY read in the same batch has been seen by the connection handler.
        let connection = self.connection
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let handler = loopBound.value
            let description = error.map { "\($0)" } ?? "stream closed without an answer"
            if refused {
                handler.finish(.notProcessed("refused: \(description)"))
            } else if let last = connection.goAwayLastStreamID, let streamID, streamID > last {
                handler.finish(.notProcessed("after GOAWAY last-stream-id \(last): \(description)"))
            } else if streamID == nil {
                handler.finish(.notProcessed("never sent: \(description)"))
            } else {
                handler.finish(.lost(description))
            }
        }
    }
}
