import NIOCore
import NIOHTTP1

/// Shows the handlers after the HTTP decoder the bytes it is parsing, while it parses them: its errors carry no bytes,
/// and the `501` for a method the server does not implement names the method (RFC 9110 §15.6.2).
///
/// Sits just before the decoder (``GatewayHTTP1Channel`` puts it there). The decoder raises an error inside the read
/// that caused it, so ``ConnectionGuardHandler`` asks ``unrecognizedMethod`` while that read is still held here; the
/// read is let go as soon as the decoder returns, so that holding it never makes the decoder copy its buffer.
final class ParserInputWindow: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The read the decoder is parsing; nil between reads.
    private var parsing: ByteBuffer?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        parsing = unwrapInboundIn(data)
        context.fireChannelRead(data)
        parsing = nil
    }

    /// The method of the request the parser refused, when the read being parsed holds that request's whole line; see
    /// ``unrecognizedMethod(in:)``.
    var unrecognizedMethod: String? { parsing.flatMap(Self.unrecognizedMethod(in:)) }

    /// The method of the first well-formed request line in `bytes` (`method SP request-target SP HTTP/d.d`, RFC 9112
    /// §3) whose method is not one the HTTP/1.1 parser knows.
    ///
    /// The parser stops at the first request whose method it does not know; the request lines before it in the same
    /// read have methods it knows. Bytes that hold no such line (`HELLO`, a line cut by the end of the read, a TLS
    /// handshake) name no method: they are not a request with an unknown method but no request at all (`400`).
    /// - Parameter bytes: The read the parser refused.
    /// - Returns: The method, or nil.
    static func unrecognizedMethod(in bytes: ByteBuffer) -> String? {
        let bytes = Array(bytes.readableBytesView)  // only on a refusal
        var start = bytes.startIndex
        while let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if let method = requestLineMethod(bytes[start..<end]), case .RAW = HTTPMethod(rawValue: method) {
                return method
            }
            start = end + 1
        }
        return nil
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
