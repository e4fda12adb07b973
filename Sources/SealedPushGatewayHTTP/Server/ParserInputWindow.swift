import NIOCore
import NIOHTTP1

/// Shows the handlers after the HTTP decoder the bytes it is parsing, while it parses them: its errors carry no bytes,
/// and the `501` for a method the server does not implement names the method (RFC 9110 §15.6.2).
///
/// Sits just before the decoder (``GatewayHTTP1Channel`` puts it there). The decoder raises an error inside the read
/// that caused it, so ``ConnectionGuardHandler`` asks ``unrecognizedMethod`` while that read is still held here; the
/// read is let go as soon as the decoder returns, so that holding it never makes the decoder copy its buffer.
///
/// A request line may arrive in pieces. The parser refuses a method at its first byte that no method it knows goes on
/// with, so the method's start may be in an earlier read (`GE` then `X / HTTP/1.1`): the last bytes of the stream
/// before the read being parsed are kept (``carriedLimit``, only those after the last line end) to name it whole. And
/// the refused read may end before its request line does (`BR` then `EW / HTTP/1.1`): then
/// ``awaitRefusedLine(limit:within:on:_:)`` goes on reading until the line ends, to name the method then.
final class ParserInputWindow: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The most bytes of the stream kept from before the read being parsed: more than the longest method the parser
    /// knows (`GET_PARAMETER`, 13 bytes), whose prefix is all a refused method can have before that read.
    static let carriedLimit = 16

    /// The read the decoder is parsing; nil between reads.
    private var parsing: ByteBuffer?
    /// The stream's last bytes before ``parsing`` (at most ``carriedLimit``), none of them a line end.
    private var carried: [UInt8] = []
    /// A refused request line being read to its end.
    private var pendingLine: PendingLine?

    /// A refused request line that had not ended in the read the parser refused.
    private struct PendingLine {
        var bytes: [UInt8]
        let limit: Int
        let timer: Scheduled<Void>?
        let completion: (String?) -> Void
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let lineWasPending = pendingLine != nil
        parsing = buffer
        context.fireChannelRead(data)
        parsing = nil
        if lineWasPending { continueRefusedLine(buffer.readableBytesView) }
        carry(buffer)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finishRefusedLine(nil)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finishRefusedLine(nil)
    }

    /// The method of the request the parser refused, when the read being parsed holds the rest of that request's line;
    /// see ``unrecognizedMethod(in:after:)``.
    var unrecognizedMethod: String? { parsing.flatMap { Self.unrecognizedMethod(in: $0, after: carried) } }

    /// Reads on until the refused request line ends, then calls `completion` with its method when the line is a request
    /// line whose method the parser does not know — or with nil when it is not, when `limit` bytes pass without a line
    /// end, when `within` passes, or when the connection ends. Call it, on the channel's event loop, from the
    /// decoder's error for the read being parsed when ``unrecognizedMethod`` is nil; `completion` is called once, at
    /// once when the bytes so far cannot start a request line.
    /// - Parameters:
    ///   - limit: The most bytes the line may have.
    ///   - within: The longest wait for the line's end.
    ///   - eventLoop: The channel's event loop (for the wait's timer).
    ///   - completion: Called once with the method, or nil.
    func awaitRefusedLine(
        limit: Int, within: TimeAmount, on eventLoop: any EventLoop, _ completion: @escaping (String?) -> Void
    ) {
        guard pendingLine == nil, let parsing else { return completion(nil) }
        let view = parsing.readableBytesView
        var line: [UInt8]
        if let lastEnd = view.lastIndex(of: UInt8(ascii: "\n")) {
            line = Array(view[view.index(after: lastEnd)...])
        } else {
            line = Self.methodPrefix(endingAt: carried) + view
        }
        guard line.count <= limit, Self.mayStartRequestLine(line) else { return completion(nil) }
        // The reads after this one go on with the line (`channelRead`).
        let window = NIOLoopBound(self, eventLoop: eventLoop)
        let timer = eventLoop.scheduleTask(in: within) { window.value.finishRefusedLine(nil) }
        pendingLine = PendingLine(bytes: line, limit: limit, timer: timer, completion: completion)
    }

    private func continueRefusedLine(_ bytes: ByteBufferView) {
        guard var pending = pendingLine else { return }
        if let end = bytes.firstIndex(of: UInt8(ascii: "\n")) {
            pending.bytes += bytes[..<end]
            pendingLine = pending
            let method = pending.bytes.count <= pending.limit ? Self.unknownMethod(ofLine: pending.bytes[...]) : nil
            return finishRefusedLine(method)
        }
        pending.bytes += bytes
        pendingLine = pending
        if pending.bytes.count > pending.limit || !Self.mayStartRequestLine(pending.bytes) { finishRefusedLine(nil) }
    }

    private func finishRefusedLine(_ method: String?) {
        guard let pending = pendingLine else { return }
        pendingLine = nil
        pending.timer?.cancel()
        pending.completion(method)
    }

    /// Keeps the stream's last bytes after its last line end, at most ``carriedLimit``.
    private func carry(_ buffer: ByteBuffer) {
        let view = buffer.readableBytesView
        let tail = view.suffix(Self.carriedLimit)
        if let end = tail.lastIndex(of: UInt8(ascii: "\n")) {
            carried.removeAll(keepingCapacity: true)
            carried += tail[view.index(after: end)...]
        } else if view.count >= Self.carriedLimit {
            carried.removeAll(keepingCapacity: true)
            carried += tail
        } else {
            carried = Array((carried + tail).suffix(Self.carriedLimit))
        }
    }

    /// The methods the HTTP/1.1 parser (llhttp, in NIO) knows, RTSP's included: any other is refused at its first byte
    /// none of these go on with.
    static let knownMethods: [String] =
        [
            HTTPMethod.GET, .PUT, .ACL, .HEAD, .POST, .COPY, .LOCK, .MOVE, .BIND, .LINK, .PATCH, .TRACE, .MKCOL,
            .MERGE, .PURGE, .NOTIFY, .SEARCH, .UNLOCK, .REBIND, .UNBIND, .REPORT, .DELETE, .UNLINK, .CONNECT,
            .MSEARCH, .OPTIONS, .PROPFIND, .CHECKOUT, .PROPPATCH, .SUBSCRIBE, .MKCALENDAR, .MKACTIVITY, .UNSUBSCRIBE,
            .SOURCE,
        ].map(\.rawValue)
        + [
            "PRI", "DESCRIBE", "ANNOUNCE", "SETUP", "PLAY", "PAUSE", "TEARDOWN", "GET_PARAMETER", "SET_PARAMETER",
            "REDIRECT", "RECORD", "FLUSH", "QUERY",
        ]

    /// The longest end of `bytes` that begins a method the parser knows (without being all of it): what of a refused
    /// method can have come before the read the parser refused it in.
    /// - Parameter bytes: The stream's last bytes before that read.
    /// - Returns: That end; empty when there is none.
    static func methodPrefix(endingAt bytes: [UInt8]) -> [UInt8] {
        for length in stride(from: bytes.count, to: 0, by: -1) {
            let candidate = bytes.suffix(length)
            if knownMethods.contains(where: { $0.utf8.count > length && $0.utf8.starts(with: candidate) }) {
                return Array(candidate)
            }
        }
        return []
    }

    /// Whether `bytes` can be the start of a request line (`method SP request-target SP HTTP/d.d`), not yet ended.
    static func mayStartRequestLine(_ bytes: [UInt8]) -> Bool {
        let line = bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes[...]
        let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        guard let method = parts.first, !method.isEmpty, method.allSatisfy(isTokenCharacter) else { return false }
        guard parts.count > 1 else { return true }
        guard parts[1].allSatisfy({ (0x21...0x7E).contains($0) }) else { return false }
        guard parts.count > 2 else { return true }
        let version = Array("HTTP/0.0".utf8)
        return !parts[1].isEmpty && parts[2].count <= version.count
            && zip(parts[2], version).allSatisfy { byte, pattern in
                pattern == UInt8(ascii: "0") ? (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) : byte == pattern
            }
    }

    /// The method of the first well-formed request line in `bytes` (`method SP request-target SP HTTP/d.d`, RFC 9112
    /// §3) whose method is not one the HTTP/1.1 parser knows — with its start in `carried` when that line is the read's
    /// first and does not begin after a line end.
    ///
    /// The parser stops at the first request whose method it does not know; the request lines before it in the same
    /// read have methods it knows. Bytes that hold no such line (`HELLO`, a line cut by the end of the read, a TLS
    /// handshake) name no method: they are not a request with an unknown method but no request at all (`400`), unless
    /// the rest arrives (``awaitRefusedLine(limit:within:on:_:)``).
    /// - Parameters:
    ///   - bytes: The read the parser refused.
    ///   - carried: The stream's last bytes before it, none a line end.
    /// - Returns: The method, or nil.
    static func unrecognizedMethod(in bytes: ByteBuffer, after carried: [UInt8] = []) -> String? {
        let bytes = Array(bytes.readableBytesView)  // only on a refusal
        var start = bytes.startIndex
        while let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = start == bytes.startIndex ? (methodPrefix(endingAt: carried) + bytes[..<end])[...] : bytes[start..<end]
            if let method = unknownMethod(ofLine: line) { return method }
            start = end + 1
        }
        return nil
    }

    /// The method of `line` when it is a well-formed request line with a method the parser does not know.
    private static func unknownMethod(ofLine line: ArraySlice<UInt8>) -> String? {
        guard let method = requestLineMethod(line), case .RAW = HTTPMethod(rawValue: method) else { return nil }
        return method
    }

    /// The method of `line` when it is a well-formed request line.
    /// - Parameter line: A line of the read, without its LF.
    /// - Returns: Its method, or nil.
    private static func requestLineMethod(_ line: ArraySlice<UInt8>) -> String? {
        let line = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenCharacter), !parts[1].isEmpty,
            parts[1].allSatisfy({ (0x21...0x7E).contains($0) })
        else { return nil }
        let version = Array(parts[2])
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)), version[6] == UInt8(ascii: "."),
            [version[5], version[7]].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return String(decoding: parts[0], as: UTF8.self)
    }

    /// Whether `byte` may be in a token (`tchar`, RFC 9110 §5.6.2), as a method or a transfer coding is.
    /// - Parameter byte: A byte of the request.
    /// - Returns: Whether it is a `tchar`.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
