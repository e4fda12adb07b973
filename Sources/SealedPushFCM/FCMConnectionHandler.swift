import NIOCore
import NIOHTTP2
import NIOTLS

/// On an FCM connection's pipeline after the HTTP/2 handler.
///
/// It reports the connection ready once TLS chose `h2`, the server's SETTINGS arrived and the server acknowledged
/// ours: the opening exchange is over, so whatever the connection reads from then on answers a request (which is
/// what tells a silent connection from a slow answer, ``FCMConnectionStreams``). A GOAWAY from the server retires the
/// connection (``FCMConnectionStreams/retire()``) and closes it if no stream is in flight; otherwise its last stream
/// closes it. Confined to the connection's event loop.
final class FCMConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame

    private let streams: FCMConnectionStreams
    private let ready: EventLoopPromise<Void>
    private var handshakeDone = false
    private var settingsReceived = false
    private var settingsAcknowledged = false
    private var readyReported = false

    /// - Parameters:
    ///   - streams: The connection's streams, retired on GOAWAY.
    ///   - ready: Succeeded when the opening exchange is over; failed if the connection fails or closes first.
    init(streams: FCMConnectionStreams, ready: EventLoopPromise<Void>) {
        self.streams = streams
        self.ready = ready
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event {
            guard negotiated == "h2" else {
                report(.failure(FCMConnectionFailure("TLS chose \(negotiated ?? "no protocol"), not h2")))
                context.close(promise: nil)
                return
            }
            handshakeDone = true
            reportIfReady()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data).payload {
        case .settings(.settings):
            settingsReceived = true
            reportIfReady()
        case .settings(.ack):
            settingsAcknowledged = true
            reportIfReady()
        case .goAway:
            if streams.retire() { context.close(promise: nil) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        report(.failure(FCMConnectionFailure("the connection closed before its HTTP/2 settings were exchanged")))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // A channel that never became active (connect refused) is torn down without channelInactive.
        report(.failure(FCMConnectionFailure("the connection could not be established")))
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        report(.failure(error))
        context.fireErrorCaught(error)
    }

    private func reportIfReady() {
        if handshakeDone, settingsReceived, settingsAcknowledged { report(.success(())) }
    }

    private func report(_ result: Result<Void, any Error>) {
        guard !readyReported else { return }
        readyReported = true
        ready.completeWith(result)
    }
}

/// An FCM connection that could not be set up.
struct FCMConnectionFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
