import NIOCore
import NIOHTTP1
import SealedPushCore

/// Checks each request head where the HTTP/1.1 decoder hands it over, with its version and its header fields as they
/// arrived, before anything takes it as a request (RFC 9112):
/// - More than one `Host`, none in an HTTP/1.1 request, or one whose value is not `uri-host [ ":" port ]` (§3.2,
///   RFC 3986 §3.2.2: a registered name, an IPv4 address or a bracketed IP literal; empty is allowed): `400
///   malformedRequest`, field `header:Host` (the value is not repeated).
/// - A `Transfer-Encoding` in an HTTP/1.0 request (§6.1), or one whose final coding is not `chunked` (§6.3: the
///   body's length cannot be known): `400 malformedRequest`; a coding other than `chunked` before a final `chunked`
///   (§6.1): `501 transferCodingNotImplemented`. Both with field `header:Transfer-Encoding`, naming the coding.
/// - A request after which the connection does not persist (HTTP/1.0 without `Connection: keep-alive`, §9.3; a
///   `close` option) is passed on with exactly `Connection: close`: Hummingbird then reads no request after it, and
///   ``ConnectionGuardHandler`` answers it with `Connection: close` and closes.
///
/// A refused head is not passed on: a ``RequestRefusal`` goes down the pipeline in its place, for
/// ``ConnectionGuardHandler`` to answer; what the decoder hands over after it (that request's body, the parser's
/// errors) goes on as usual, and the guard drops it. The check is one pass over the header names, comparing only the
/// names of the right length; nothing is allocated unless a head is refused or its `Connection` rewritten.
final class RequestHeadCheckHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        var hosts = 0
        var host = ""
        var connections = 0
        var transferEncoding = false
        for field in head.headers {
            switch field.name.utf8.count {
            case 4:
                if Self.isName(field.name, "host") {
                    hosts += 1
                    host = field.value
                }
            case 10: if Self.isName(field.name, "connection") { connections += 1 }
            case 17: if Self.isName(field.name, "transfer-encoding") { transferEncoding = true }
            default: break
            }
        }
        let http11 = head.version.major > 1 || (head.version.major == 1 && head.version.minor >= 1)
        if hosts > 1 || (hosts == 0 && http11) {
            let rule = http11 ? "an HTTP/1.1 request needs exactly one" : "a request may have at most one"
            let error = GatewayAPIError.malformed(
                "\(rule) Host header; it had \(hosts == 0 ? "none" : "\(hosts)") (RFC 9112 §3.2)", field: "header:Host")
            refuse(error, head, context: context)
            return
        }
        if hosts == 1, !Self.isValidHost(host) {
            let error = GatewayAPIError.malformed(
                "the Host header is not a host name, IPv4 address or [IP literal] with an optional :port "
                    + "(RFC 9112 §3.2, RFC 3986 §3.2.2)", field: "header:Host")
            refuse(error, head, context: context)
            return
        }
        if transferEncoding, let error = Self.transferEncodingRefusal(head, http11: http11) {
            refuse(error, head, context: context)
            return
        }
        // HTTP/1.1 persists unless told to close; HTTP/1.0 closes unless told to keep alive (`isKeepAlive`: the
        // parser's answer, kept with the head). Hummingbird and the guard both take exactly one `Connection: close` as
        // the request's last.
        if !head.isKeepAlive, connections != 1 || head.headers.first(name: "connection") != "close" {
            head.headers.replaceOrAdd(name: "connection", value: "close")
            context.fireChannelRead(wrapInboundOut(.head(head)))
            return
        }
        context.fireChannelRead(data)
    }

    /// Sends the refusal of `head` down the pipeline in its place.
    /// - Parameters:
    ///   - error: The answer.
    ///   - head: The refused head (a `HEAD` is answered without the body).
    ///   - context: This handler's context.
    private func refuse(_ error: GatewayAPIError, _ head: HTTPRequestHead, context: ChannelHandlerContext) {
        context.fireErrorCaught(RequestRefusal(error: error, withoutBody: head.method == .HEAD))
    }

    /// Whether the header name `name` is `lowercase` (ASCII letters in any case).
    /// - Parameters:
    ///   - name: A header name as received.
    ///   - lowercase: The name to compare with, in lower case.
    /// - Returns: Whether they are the same name.
    static func isName(_ name: String, _ lowercase: String) -> Bool {
        name.utf8.elementsEqual(lowercase.utf8) { byte, lower in
            byte == lower || (byte | 0x20 == lower && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower))
        }
    }

    /// Whether `value` is a valid `Host` field value: `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2), where
    /// `uri-host` is a reg-name (unreserved characters, `%` and two hex digits, sub-delims; possibly empty, which
    /// also covers IPv4 addresses) or an IP literal in brackets (checked loosely: a non-empty run of unreserved
    /// characters, sub-delims and `:`, which covers IPv6 addresses and IPvFuture), and `port` is digits.
    /// - Parameter value: The field value, as the parser gave it (surrounding whitespace removed).
    /// - Returns: Whether it has that form.
    static func isValidHost(_ value: String) -> Bool {
        func isNameByte(_ byte: UInt8) -> Bool { URICharacters.isUnreserved(byte) || URICharacters.isSubDelimiter(byte) }
        var bytes = Substring(value).utf8[...]
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let literal = bytes[bytes.index(after: bytes.startIndex)..<close]
            guard !literal.isEmpty, literal.allSatisfy({ isNameByte($0) || $0 == UInt8(ascii: ":") }) else { return false }
            bytes = bytes[bytes.index(after: close)...]
        } else {
            var index = bytes.startIndex
            while index < bytes.endIndex, bytes[index] != UInt8(ascii: ":") {
                let byte = bytes[index]
                if byte == UInt8(ascii: "%") {
                    let first = bytes.index(after: index)
                    let second = first < bytes.endIndex ? bytes.index(after: first) : first
                    guard second < bytes.endIndex, URICharacters.hexValue(bytes[first]) != nil,
                        URICharacters.hexValue(bytes[second]) != nil
                    else { return false }
                    index = bytes.index(after: second)
                    continue
                }
                guard isNameByte(byte) else { return false }
                index = bytes.index(after: index)
            }
            bytes = bytes[index...]
        }
        guard let colon = bytes.first else { return true }
        return colon == UInt8(ascii: ":")
            && bytes.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The refusal of a request's `Transfer-Encoding`, when the server cannot take it; nil for `chunked` alone (the
    /// parser checks the rest).
    /// - Parameters:
    ///   - head: The request's head, which has a `Transfer-Encoding`.
    ///   - http11: Whether the request is HTTP/1.1.
    /// - Returns: `400 malformedRequest` or `501 transferCodingNotImplemented`, field `header:Transfer-Encoding`.
    static func transferEncodingRefusal(_ head: HTTPRequestHead, http11: Bool) -> GatewayAPIError? {
        let field = "header:Transfer-Encoding"
        guard http11 else {
            return .malformed(
                "an HTTP/1.0 request cannot have a Transfer-Encoding (RFC 9112 §6.1): send its body with a "
                    + "Content-Length", field: field)
        }
        let codings = head.headers[canonicalForm: "transfer-encoding"].compactMap { value -> String? in
            // A coding may carry parameters (`gzip;q=1`): its name is what precedes them.
            let name = value.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
            return name.isEmpty ? nil : name
        }
        guard let other = codings.first(where: { $0 != "chunked" }), let last = codings.last else { return nil }
        guard last == "chunked" else {
            return .malformed(
                "the request's Transfer-Encoding ends with \(Self.quotable(last)), not chunked, so its body's length "
                    + "cannot be known (RFC 9112 §6.3): send the body chunked alone, or with a Content-Length",
                field: field)
        }
        return .transferCodingNotImplemented(Self.quotable(other))
    }

    /// A transfer coding as a message may quote it.
    /// - Parameter coding: The coding's name, as the request has it (lower-cased).
    /// - Returns: The name when it is a token of at most 32 characters, else a description.
    private static func quotable(_ coding: String) -> String {
        coding.utf8.count <= 32 && coding.utf8.allSatisfy(ParserInputWindow.isTokenCharacter)
            ? coding : "(a coding that is not a token)"
    }
}
