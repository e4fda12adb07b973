import NIOCore
import NIOHTTP2
import NIOTLS

/// On a provider connection's pipeline (APNs, FCM) right after the HTTP/2 handler: tells when the connection's opening
/// exchange is over — TLS chose `h2`, the server's SETTINGS arrived and the server acknowledged ours.
///
/// Only then may a request use the connection: from that point whatever the connection reads answers requests, which
/// is what tells a silent connection from a slow answer (``InboundActivityHandler``). Passes every frame and event on.
/// Confined to the channel's event loop.
package final class HTTP2ReadinessHandler: ChannelInboundHandler, @unchecked Sendable {
    package typealias InboundIn = HTTP2Frame
    package typealias InboundOut = HTTP2Frame

    private let promise: EventLoopPromise<Void>
    private var handshakeDone = false
    private var settingsReceived = false
    private var settingsAcknowledged = false
    private var reported = false

    /// Succeeds when the opening exchange is over; fails if TLS chose another protocol or the connection failed or
    /// closed first.
    package var ready: EventLoopFuture<Void> { promise.futureResult }

    /// - Parameter eventLoop: The connection's event loop.
    package init(eventLoop: EventLoop) {
        promise = eventLoop.makePromise(of: Void.self)
    }

    /// Waits for a connection's ``ready``, closing the connection if that fails or takes longer than `timeout`.
    /// - Parameters:
    ///   - ready: The connection's ``ready``.
    ///   - channel: The connection.
    ///   - timeout: How long the exchange may take.
    /// - Throws: ``HTTP2ConnectionSetupError``, or the connection's error.
    package static func wait(for ready: EventLoopFuture<Void>, on channel: Channel, timeout: TimeAmount) async throws {
        let timer = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        do {
            try await ready.get()
            timer.cancel()
        } catch {
            timer.cancel()
            channel.close(promise: nil)
            throw error
        }
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event {
            guard negotiated == "h2" else {
                report(.failure(HTTP2ConnectionSetupError("ALPN did not select h2 (got \(negotiated ?? "none"))")))
                context.close(promise: nil)
                return
            }
            handshakeDone = true
            reportIfReady()
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .settings(let settings) = unwrapInboundIn(data).payload {
            if case .ack = settings { settingsAcknowledged = true } else { settingsReceived = true }
            reportIfReady()
        }
        context.fireChannelRead(data)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        report(.failure(HTTP2ConnectionSetupError("the connection closed before it was ready")))
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        // A channel that never became active (connect refused) is torn down without channelInactive.
        report(.failure(HTTP2ConnectionSetupError("the connection could not be established")))
    }

    package func errorCaught(context: ChannelHandlerContext, error: Error) {
        report(.failure(error))
        context.fireErrorCaught(error)
    }

    private func reportIfReady() {
        if handshakeDone, settingsReceived, settingsAcknowledged { report(.success(())) }
    }

    private func report(_ result: Result<Void, any Error>) {
        guard !reported else { return }
        reported = true
        promise.completeWith(result)
    }
}

/// A provider connection that could not be set up.
package struct HTTP2ConnectionSetupError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
