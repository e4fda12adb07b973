#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix
import Synchronization

/// A small HTTP/1.1 server on loopback that misbehaves on purpose: it answers each path with a scripted
/// ``Behavior`` written byte by byte (no HTTP encoder), so it can lie about `Content-Length`, trickle, truncate and
/// reset the connection mid-body.
final class FaultHTTPServer: Sendable {
    enum Behavior: Sendable {
        /// `200` with an honest `Content-Length`.
        case serve([UInt8])
        /// `200` with `Content-Length: claimed`, then exactly `body` on the wire, then close.
        case claim(Int, body: [UInt8])
        /// `200` with an honest `Content-Length`, `bytesPerTick` bytes every `interval`.
        case trickle([UInt8], bytesPerTick: Int, interval: TimeAmount)
        /// `200` in chunked transfer coding: `body`, then a proper last chunk (a clean end of a short body).
        case chunked([UInt8])
        /// `200` claiming `claimed` bytes, `body` on the wire, then a TCP reset (SO_LINGER 0).
        case reset(claimed: Int, body: [UInt8])
        /// This status with an empty body.
        case status(Int)
        /// `200` with an honest `Content-Length`, written 64 KiB at a time, each piece only once the previous one is
        /// in the socket; `sent` counts the bytes the kernel has taken (how far the server got ahead of a client).
        case paced([UInt8], sent: SentBytes)
    }

    /// Bytes a paced response has handed to the kernel.
    final class SentBytes: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add(_ bytes: Int) { count.add(bytes, ordering: .relaxed) }
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: any Channel

    /// The bound port.
    var port: Int { channel.localAddress?.port ?? 0 }

    /// Starts a server answering `routes` (path → behavior); other paths get 404.
    init(routes: [String: Behavior]) async throws {
        channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FaultHandler(routes: routes))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Reads one request head and plays the route's behavior.
private final class FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let routes: [String: FaultHTTPServer.Behavior]
    private var request: [UInt8] = []
    private var answered = false
    private var ticker: RepeatedTask?

    init(routes: [String: FaultHTTPServer.Behavior]) { self.routes = routes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        request += unwrapInboundIn(data).readableBytesView
        guard let end = request.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
        answered = true
        let line = String(decoding: request[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n").first ?? ""
        let parts = line.split(separator: " ")
        let path = parts.count >= 2 ? String(parts[1]) : ""
        play(routes[path] ?? .status(404), channel: context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        ticker?.cancel()
        context.fireChannelInactive()
    }

    private func play(_ behavior: FaultHTTPServer.Behavior, channel: any Channel) {
        switch behavior {
        case .serve(let body):
            send(head(200, length: body.count) + body, then: .close, on: channel)
        case .claim(let claimed, let body):
            send(head(200, length: claimed) + body, then: .close, on: channel)
        case .chunked(let body):
            let hex = Array(String(body.count, radix: 16).utf8)
            let bytes = head(200, length: nil, extra: "Transfer-Encoding: chunked\r\n") + hex + [13, 10] + body
                + Array("\r\n0\r\n\r\n".utf8)
            send(bytes, then: .close, on: channel)
        case .reset(let claimed, let body):
            send(head(200, length: claimed) + body, then: .reset, on: channel)
        case .status(let status):
            send(head(status, length: 0), then: .close, on: channel)
        case .paced(let body, let sent):
            channel.writeAndFlush(ByteBuffer(bytes: head(200, length: body.count)), promise: nil)
            Self.writePiece(of: body, from: 0, sent: sent, on: channel)
        case .trickle(let body, let bytesPerTick, let interval):
            channel.writeAndFlush(ByteBuffer(bytes: head(200, length: body.count)), promise: nil)
            let offset = Offset()
            ticker = channel.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { task in
                let next = min(body.count, offset.value + bytesPerTick)
                guard channel.isActive, offset.value < next else {
                    task.cancel()
                    return
                }
                channel.writeAndFlush(ByteBuffer(bytes: body[offset.value..<next]), promise: nil)
                offset.value = next
            }
        }
    }

    private static func writePiece(of body: [UInt8], from offset: Int, sent: FaultHTTPServer.SentBytes, on channel: any Channel) {
        guard offset < body.count else {
            channel.close(promise: nil)
            return
        }
        let end = min(body.count, offset + 65_536)
        channel.writeAndFlush(ByteBuffer(bytes: body[offset..<end])).whenComplete { result in
            guard case .success = result else { return }
            sent.add(end - offset)
            writePiece(of: body, from: end, sent: sent, on: channel)
        }
    }

    private enum Ending { case close, reset }

    private func send(_ bytes: [UInt8], then ending: Ending, on channel: any Channel) {
        channel.writeAndFlush(ByteBuffer(bytes: bytes)).whenComplete { _ in
            switch ending {
            case .close:
                channel.close(promise: nil)
            case .reset:
                guard let socket = channel as? any SocketOptionProvider else {
                    channel.close(promise: nil)
                    return
                }
                socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }

    private func head(_ status: Int, length: Int?, extra: String = "") -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Status")\r\nConnection: close\r\n"
        text += "Content-Type: application/octet-stream\r\n" + extra
        if let length { text += "Content-Length: \(length)\r\n" }
        return Array((text + "\r\n").utf8)
    }
}

/// A counter for the trickle task (used on the event loop only).
private final class Offset: @unchecked Sendable {
    var value = 0
}
