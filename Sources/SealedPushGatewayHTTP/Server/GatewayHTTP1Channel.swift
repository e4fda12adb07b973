import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1.1 child channel with the gateway's handlers around its HTTP codec:
/// ``ParserInputWindow`` before the decoder, ``RequestHeadCheckHandler`` right after it (where a request head still has
/// its HTTP version and its header fields as they arrived), and ``ConnectionGuardHandler`` after the conversion to
/// HTTP types, where Hummingbird puts its `additionalChannelHandlers`.
struct GatewayHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    private let base: HTTP1Channel

    /// Creates the channel.
    /// - Parameters:
    ///   - responder: Hummingbird's responder (the application's router).
    ///   - idleTimeout: How long a connection may send nothing before it is closed.
    init(responder: @escaping HTTPChannelHandler.Responder, idleTimeout: TimeAmount) {
        base = HTTP1Channel(responder: responder, configuration: HTTP1Channel.Configuration(idleTimeout: idleTimeout))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let requestLoop = try pipeline.handler(type: HTTPConnectionStateHandler.self)
            let window = ParserInputWindow()
            try pipeline.addHandler(window, position: .before(decoder))
            try pipeline.addHandler(RequestHeadCheckHandler(), position: .after(decoder))
            try pipeline.addHandler(ConnectionGuardHandler(parserInput: window), position: .before(requestLoop))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
