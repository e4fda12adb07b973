import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import SealedPushAPNsEmulatorRules

/// Serves one HTTP/2 stream: collects the request, applies a fault or Apple's rules, answers, records.
final class EmulatorStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let connection: EmulatorConnection
    private var core: EmulatorCore { connection.core }
    private var request = EmulatorRequest(method: nil, path: nil, headers: [:], body: [], bodyTooLarge: false)
    private var sawHeaders = false
    private var done = false

    init(connection: EmulatorConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if !sawHeaders {
                sawHeaders = true
                for (name, value, _) in headers.headers {
                    switch name {
                    case ":method": request.method = value
                    case ":path": request.path = value
                    default: if !name.hasPrefix(":") { request.headers[name] = value }
                    }
                }
            }
            if headers.endStream { process(context: context) }
        case .data(let body):
            if case .byteBuffer(var buffer) = body.data {
                let room = EmulatorRequestValidator.maximumBodyBytes + 1 - request.body.count
                if buffer.readableBytes > room { request.bodyTooLarge = true }
                if room > 0, let bytes = buffer.readBytes(length: min(room, buffer.readableBytes)) {
                    request.body += bytes
                }
            }
            if body.endStream { process(context: context) }
        default:
            break
        }
    }

    private func process(context: ChannelHandlerContext) {
        done = true
        var apnsID = UUID().uuidString.lowercased()
        var badID = false
        if let given = request.headers["apns-id"] {
            if let uuid = UUID(uuidString: given) { apnsID = uuid.uuidString.lowercased() } else { badID = true }
        }
        core.recorder.countRequest(apnsID: apnsID, hasPushType: request.headers["apns-push-type"] != nil)
        guard !connection.closing else { return }
        if badID {
            respond(context: context, status: 400, apnsID: apnsID, reason: "BadMessageId", timestamp: nil, record: nil)
            return
        }
        let fault = core.nextFault()
        if let fault { core.recorder.countFault(fault) }
        switch fault {
        case nil:
            answer(context: context, apnsID: apnsID)
        case .status(let status, let reason):
            respond(context: context, status: status, apnsID: apnsID, reason: reason, timestamp: nil, record: nil)
        case .connectionReset:
            connection.reset()
        case .goAway:
            connection.goAway(reason: "Shutdown")
        case .slow(let milliseconds):
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let answeredID = apnsID
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(max(0, milliseconds)))) {
                let (handler, context) = loopBound.value
                guard context.channel.isActive else { return }
                handler.answer(context: context, apnsID: answeredID)
            }
        case .noResponse:
            break
        case .stallConnection:
            context.channel.parent?.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        }
    }

    private func answer(context: ChannelHandlerContext, apnsID: String) {
        guard !connection.closing else { return }
        switch core.validator.validate(request, apnsID: apnsID, session: connection.tokenSession) {
        case .accept(let notification):
            respond(context: context, status: 200, apnsID: apnsID, reason: nil, timestamp: nil, record: notification)
        case .reject(let status, let reason, let timestamp):
            respond(context: context, status: status, apnsID: apnsID, reason: reason, timestamp: timestamp, record: nil)
        }
    }

    private func respond(
        context: ChannelHandlerContext, status: Int, apnsID: String, reason: String?, timestamp: Date?,
        record: RecordedNotification?
    ) {
        guard !connection.closing, context.channel.isActive else { return }
        var headers = HPACKHeaders([(":status", String(status))])
        headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
        var body: ByteBuffer?
        if let reason {
            var json = "{\"reason\":\"\(reason)\""
            if let timestamp { json += ",\"timestamp\":\(Int64((timestamp.timeIntervalSince1970 * 1000).rounded()))" }
            json += "}"
            headers.add(name: "content-type", value: "application/json")
            body = context.channel.allocator.buffer(string: json)
        }
        let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        connection.answered(streamID: streamID)
        let recorder = core.recorder
        if let record { recorder.record(record) }
        let promise = context.eventLoop.makePromise(of: Void.self)
        if let body {
            context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: false))), promise: nil)
            context.writeAndFlush(
                wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: promise)
        } else {
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: promise)
        }
        // Recorded before the answer leaves (above), so a client holding a 200 always finds the record; withdrawn
        // if the answer could not be written (then the client never saw it and will resend).
        promise.futureResult.whenComplete { result in
            switch result {
            case .success: recorder.answered(status: status, record: record)
            case .failure: if let record { recorder.withdraw(record) }
            }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connection.streamOpened()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        connection.streamClosed()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
