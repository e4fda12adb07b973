import Foundation
import NIOCore
import NIOHTTP2
import SealedPushAPNsEmulatorRules

/// One TLS connection's state. Confined to the connection's event loop (its streams share it).
final class EmulatorConnection: @unchecked Sendable {
    let channel: Channel
    let core: EmulatorCore
    /// The provider token this connection uses (for TooManyProviderTokenUpdates).
    let tokenSession = EmulatorTokenSession()
    /// Set once a GOAWAY or reset was decided: no stream on this connection is answered or recorded any more.
    private(set) var closing = false
    /// The highest stream id answered so far (the last-stream-id of a GOAWAY).
    private(set) var lastAnsweredStreamID: HTTP2StreamID = .rootStream
    private var openStreams = 0
    private var idleTask: Scheduled<Void>?

    init(channel: Channel, core: EmulatorCore) {
        self.channel = channel
        self.core = core
    }

    func answered(streamID: HTTP2StreamID?) {
        if let streamID, streamID > lastAnsweredStreamID { lastAnsweredStreamID = streamID }
        if !answeredAny {
            answeredAny = true
            core.recorder.noteFirstAnswer(openStreams: peakBeforeFirstAnswer)
        }
    }

    private var answeredAny = false
    private var carriedRequests = false
    private var peakBeforeFirstAnswer = 0

    /// GOAWAY with a JSON reason and the highest answered stream id; unanswered streams are dropped; the
    /// connection closes shortly after, so the client sees the GOAWAY first.
    func goAway(reason: String) {
        guard !closing else { return }
        closing = true
        idleTask?.cancel()
        var data = channel.allocator.buffer(capacity: 32)
        data.writeString("{\"reason\":\"\(reason)\"}")
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: lastAnsweredStreamID, errorCode: .noError, opaqueData: data))
        core.logger.debug("emulator GOAWAY", metadata: ["reason": "\(reason)", "last": "\(lastAnsweredStreamID)"])
        let channel = self.channel
        channel.writeAndFlush(frame).whenComplete { _ in
            channel.eventLoop.scheduleTask(in: .milliseconds(50)) { Self.shutDown(channel) }
        }
    }

    /// Drops the connection at once, without GOAWAY: every unanswered stream is lost.
    ///
    /// The TCP side is closed gracefully (TLS close_notify + FIN, then a full close shortly after) rather than
    /// with a TCP RST, so that answers already written are not destroyed in the client's receive buffer: what the
    /// recorder counts as accepted is exactly what the client can read.
    func reset() {
        guard !closing else { return }
        closing = true
        idleTask?.cancel()
        core.logger.debug("emulator connection reset")
        Self.shutDown(channel)
    }

    private static func shutDown(_ channel: Channel) {
        channel.close(mode: .output).whenComplete { result in
            if case .failure = result {
                channel.close(promise: nil)
                return
            }
            channel.eventLoop.scheduleTask(in: .milliseconds(500)) { channel.close(promise: nil) }
        }
    }

    func streamOpened() {
        if !carriedRequests {
            carriedRequests = true
            core.recorder.countConnectionCarryingRequests()
        }
        openStreams += 1
        if !answeredAny { peakBeforeFirstAnswer = max(peakBeforeFirstAnswer, openStreams) }
        idleTask?.cancel()
        idleTask = nil
    }

    func streamClosed() {
        openStreams = max(0, openStreams - 1)
        guard openStreams == 0, !closing, let timeout = core.configuration.idleTimeout else { return }
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        idleTask = channel.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { [weak self] in
            guard let self, self.openStreams == 0 else { return }
            self.goAway(reason: "IdleTimeout")
        }
    }

    func closed() {
        closing = true
        idleTask?.cancel()
    }
}

/// Sits after the HTTP/2 handler on the connection: counts the connection, notices closure.
final class EmulatorConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame

    private let connection: EmulatorConnection

    init(connection: EmulatorConnection) {
        self.connection = connection
    }

    func channelActive(context: ChannelHandlerContext) {
        connection.core.recorder.countConnection()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Connection-level frames (SETTINGS, PING, GOAWAY from the client): nothing to do.
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.closed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        connection.core.logger.debug("emulator connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }
}
