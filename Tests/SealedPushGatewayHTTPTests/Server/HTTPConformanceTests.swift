import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP/1.1 as RFC 9110 and RFC 9112 require it of a server, seen over raw sockets (an outside audit found each of
/// these missing): `HEAD` on every `GET` route and in the `Allow` of every `405` that allows `GET`; `400` for an
/// HTTP/1.1 request without exactly one `Host`; HTTP/1.0 connections closed after the response unless kept alive;
/// `501` for a method the server does not implement, and for a transfer coding it does not implement.
@Suite("Gateway HTTP: HTTP/1.1 conformance (RFC 9110, RFC 9112)")
struct HTTPConformanceTests {
    /// One response as read off the wire.
    struct WireResponse: Sendable {
        let status: Int
        /// The header fields in the order sent, names as sent.
        let fields: [(name: String, value: String)]
        let body: [UInt8]

        /// The value of the first field named `name` (any case).
        func field(_ name: String) -> String? {
            fields.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// Every field but `Date` (which may change between two answers) and `Connection` (which answers the
        /// connection's request to close, not the request's resource), as `name: value` lines.
        var comparableFields: [String] {
            fields.filter { !["date", "connection"].contains($0.name.lowercased()) }
                .map { "\($0.name.lowercased()): \($0.value)" }
        }

        /// The body as a JSON object (empty when it is not one).
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }

        /// The methods of `Allow`, in order.
        var allow: [String] {
            (field("allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// What one connection carried: the whole responses in order, the bytes after them that make no whole response,
    /// and whether the server closed the connection (before the socket's receive timeout).
    struct Exchange: Sendable {
        let responses: [WireResponse]
        let leftover: Int
        let closed: Bool

        /// The only response, or a failure.
        func single(_ what: String) throws -> WireResponse {
            guard responses.count == 1, let response = responses.first else {
                throw TestFailure("\(what): \(responses.count) whole responses (and \(leftover) bytes more)")
            }
            return response
        }
    }

    /// Splits `bytes` into whole responses; `heads[i]` says whether the i-th answers a `HEAD` (no body, whatever its
    /// `Content-Length`). Bodies are framed by `Content-Length` (the gateway always sends one).
    static func parseResponses(_ bytes: [UInt8], heads: [Bool]) -> (responses: [WireResponse], consumed: Int) {
        var responses: [WireResponse] = []
        var offset = 0
        let separator = Array("\r\n\r\n".utf8)
        while bytes.count - offset >= separator.count {
            guard let end = (offset...(bytes.count - separator.count)).first(where: {
                bytes[$0..<$0 + separator.count].elementsEqual(separator)
            }) else { break }
            var lines = String(decoding: bytes[offset..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst()
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            let status = parts.count > 1 && parts[0].hasPrefix("HTTP/1.") ? Int(parts[1]) ?? 0 : 0
            let fields = lines.map { line -> (name: String, value: String) in
                let pair = line.split(separator: ":", maxSplits: 1)
                return (String(pair.first ?? ""), pair.count > 1 ? pair[1].trimmingCharacters(in: .whitespaces) : "")
            }
            let isHead = responses.count < heads.count && heads[responses.count]
            let declared = fields.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
            let length = isHead ? 0 : declared
            let bodyStart = end + separator.count
            guard bytes.count - bodyStart >= length else { break }
            let body = Array(bytes[bodyStart..<bodyStart + length])
            responses.append(WireResponse(status: status, fields: fields, body: body))
            offset = bodyStart + length
        }
        return (responses, offset)
    }

    /// Reads from `socket` into `buffer` until `count` whole responses are there, the server closes, or the socket's
    /// receive timeout passes.
    /// - Returns: Whether the server closed the connection.
    static func readResponses(
        _ socket: RawSocket, into buffer: inout [UInt8], responses count: Int, heads: [Bool]
    ) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while parseResponses(buffer, heads: heads).responses.count < count {
            let received = chunk.withUnsafeMutableBytes { recv(socket.descriptor, $0.baseAddress, $0.count, 0) }
            if received > 0 {
                buffer += chunk[..<received]
                continue
            }
            // 0: the server closed; otherwise a reset (closed too) or the timeout.
            return received == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
        }
        return false
    }

    /// Runs blocking socket calls on a thread of their own: blocked on the cooperative pool (two threads on two
    /// cores), they would starve the server under test, whose handlers run there.
    static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Sends `request` on a fresh connection and reads until the server closes or `timeout` seconds pass.
    /// - Parameters:
    ///   - port: The gateway's port.
    ///   - request: The raw bytes, as text.
    ///   - heads: Which of the responses answer a `HEAD`.
    ///   - timeout: The socket's receive timeout.
    static func exchange(port: Int, _ request: String, heads: [Bool] = [], timeout: Int = 5) async throws -> Exchange {
        try await exchange(port: port, inPieces: [request], heads: heads, timeout: timeout)
    }

    /// Sends `pieces` on a fresh connection, `pause` apart (so that the server reads each on its own), and reads until
    /// the server closes or `timeout` seconds pass.
    /// - Parameters:
    ///   - port: The gateway's port.
    ///   - pieces: The raw bytes, as text, in the pieces they are sent in.
    ///   - pause: The wait between two pieces, in milliseconds.
    ///   - heads: Which of the responses answer a `HEAD`.
    ///   - timeout: The socket's receive timeout.
    static func exchange(
        port: Int, inPieces pieces: [String], pause: UInt32 = 200, heads: [Bool] = [], timeout: Int = 5
    ) async throws -> Exchange {
        try await offThePool {
            let socket = try RawSocket(port: port, timeout: timeout)
            var noDelay: Int32 = 1
            setsockopt(socket.descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            for (index, piece) in pieces.enumerated() {
                if index > 0 { usleep(pause * 1_000) }
                _ = socket.send(piece)
            }
            var buffer: [UInt8] = []
            let closed = Self.readResponses(socket, into: &buffer, responses: .max, heads: heads)
            let parsed = Self.parseResponses(buffer, heads: heads)
            return Exchange(responses: parsed.responses, leftover: buffer.count - parsed.consumed, closed: closed)
        }
    }

    // MARK: HEAD (RFC 9110 §9.1, §9.3.2)

    /// Regression: `HEAD /healthz` was `405 Allow: GET`. Every GET route answers HEAD as its GET: the same status and
    /// header fields (`Content-Length` included), no body — checked on one connection, where a body after the HEAD's
    /// answer would be read as the GET's.
    @Test func headAnswersEveryGetRouteAsItsGetWithoutTheBody() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            try await server.registerDevice("phone-1")
            let port = server.client.base.port!
            let auth = "Authorization: Bearer \(server.keys["app1"]!)"
            let targets: [(path: String, headers: [String])] = [
                ("/healthz", []),
                ("/v1/apps/app1/devices/phone-1", [auth]),
                ("/v1/apps/app1/devices/phone-1", []),  // 401, with WWW-Authenticate
                ("/v1/apps/app1/devices/nobody", [auth]),  // 404
                ("/v1/apps/app1/notifications/\(UUID().uuidString.lowercased())", [auth]),  // 404
                ("/metrics", []),
            ]
            for target in targets {
                func request(_ method: String, close: Bool = false) -> String {
                    "\(method) \(target.path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + target.headers.map { $0 + "\r\n" }.joined() + (close ? "Connection: close\r\n" : "") + "\r\n"
                }
                let exchange = try await Self.exchange(
                    port: port, request("HEAD") + request("GET", close: true), heads: [true, false])
                let what = "\(target.path) \(target.headers.isEmpty ? "without" : "with") a key"
                try #require(exchange.responses.count == 2, "\(what): \(exchange.responses.map(\.status))")
                let (head, get) = (exchange.responses[0], exchange.responses[1])
                #expect(head.status == get.status, "\(what)")
                #expect([200, 401, 404].contains(get.status), "\(what): GET answered \(get.status)")
                #expect(exchange.leftover == 0, "\(what): \(exchange.leftover) bytes after the answers")
                #expect(head.field("content-length") != nil, "\(what)")
                if target.path == "/metrics" {
                    // Its text changes with every request counted: the same fields, each with its own length.
                    #expect(head.field("content-type") == get.field("content-type"), "\(what)")
                } else {
                    #expect(head.comparableFields == get.comparableFields, "\(what)")
                    #expect(head.field("content-length") == String(get.body.count), "\(what)")
                }
            }
        }
    }

    /// Regression: `Allow` said `GET` without `HEAD`. A `405`'s `Allow` lists `HEAD` wherever it lists `GET` (and
    /// only there); a `HEAD` the API refuses is answered without a body too.
    @Test func allowListsHeadWhereverItListsGet() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let port = server.client.base.port!
            let notification = "/v1/apps/app1/notifications/\(UUID().uuidString.lowercased())"
            let cases: [(method: String, path: String, allow: Set<String>)] = [
                ("DELETE", "/healthz", ["GET", "HEAD"]),
                ("POST", "/metrics", ["GET", "HEAD"]),
                ("PATCH", "/v1/apps/app1/devices/d", ["PUT", "GET", "HEAD", "DELETE"]),
                ("PUT", notification, ["GET", "HEAD", "DELETE"]),
                ("GET", "/v1/apps/app1/notifications", ["POST"]),
                ("HEAD", "/v1/apps/app1/notifications", ["POST"]),
                ("HEAD", "/v1/apps/app1/badge", ["POST"]),
            ]
            for item in cases {
                let isHead = item.method == "HEAD"
                let exchange = try await Self.exchange(
                    port: port, "\(item.method) \(item.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                    heads: [isHead])
                let response = try exchange.single("\(item.method) \(item.path)")
                #expect(response.status == 405, "\(item.method) \(item.path)")
                #expect(Set(response.allow) == item.allow, "\(item.method) \(item.path): Allow: \(response.allow)")
                #expect(response.allow.count == item.allow.count, "\(item.method) \(item.path): \(response.allow)")
                #expect(exchange.leftover == 0, "\(item.method) \(item.path): \(exchange.leftover) bytes of a body")
                if !isHead { #expect(response.json["code"] as? String == "methodNotAllowed") }
            }
            // A HEAD of a path the API does not have: 404 as its GET, without the body.
            let unknown = try await Self.exchange(
                port: port, "HEAD /admin HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", heads: [true])
            #expect(try unknown.single("HEAD /admin").status == 404)
            #expect(unknown.leftover == 0, "HEAD /admin: \(unknown.leftover) bytes of a body")
        }
    }

    // MARK: Host (RFC 9112 §3.2)

    /// Regression: an HTTP/1.1 request without `Host`, or with two, was served. Now `400 malformedRequest` naming
    /// what was wrong (field `header:Host`), before the router (and before the key is checked), and the connection
    /// closes; HTTP/1.0 needs no `Host` but may not have two.
    @Test func anHTTP11RequestNeedsExactlyOneHost() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let port = server.client.base.port!
            let cases: [(what: String, request: String, says: String)] = [
                ("HTTP/1.1 without Host", "GET /healthz HTTP/1.1\r\n\r\n", "it had none"),
                ("HTTP/1.1 with two", "GET /healthz HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", "it had 2"),
                ("HTTP/1.0 with two", "GET /healthz HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", "it had 2"),
                ("a send without Host", "POST /v1/apps/app1/notifications HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
                    "it had none"),
            ]
            for item in cases {
                let exchange = try await Self.exchange(port: port, item.request)
                let response = try exchange.single(item.what)
                #expect(response.status == 400, "\(item.what)")
                #expect(response.json["code"] as? String == "malformedRequest", "\(item.what): \(response.json)")
                #expect(response.json["field"] as? String == "header:Host", "\(item.what)")
                let message = response.json["message"] as? String ?? ""
                #expect(message.contains("Host") && message.contains(item.says), "\(item.what): \(message)")
                #expect(response.field("connection")?.lowercased() == "close", "\(item.what)")
                #expect(exchange.closed, "\(item.what): the connection stayed open")
            }
            // A HEAD refused so is answered without a body.
            let head = try await Self.exchange(port: port, "HEAD /healthz HTTP/1.1\r\n\r\n", heads: [true])
            #expect(try head.single("HEAD without Host").status == 400)
            #expect(head.leftover == 0, "HEAD without Host: \(head.leftover) bytes of a body")
            // HTTP/1.0 without Host is served.
            let old = try await Self.exchange(port: port, "GET /healthz HTTP/1.0\r\n\r\n")
            #expect(try old.single("HTTP/1.0 without Host").status == 200)
            // Pipelined behind a good request: the good one is answered first, then the refusal.
            let pipelined = try await Self.exchange(
                port: port, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n")
            #expect(pipelined.responses.map(\.status) == [200, 400])
            #expect(pipelined.closed)
        }
    }

    /// Regression: a `Host` whose value is not `host[:port]` (a space, `@`, a path, a bad port, an unclosed bracket, a
    /// bad percent-escape) was served. Now `400 malformedRequest`, field `header:Host`, without the value in the
    /// message; names, addresses, bracketed IPv6, an empty value and ports are served.
    @Test func aHostValueMustBeHostAndPort() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let port = server.client.base.port!
            let refused = [
                "a b", "user@example.com", "example.com/path", "example.com:80x", "example.com:80:81", "[::1",
                "[]", "[::1]x", "ex%zzample.com", "ex%4", "exa\"mple.com", "<script>",
            ]
            for value in refused {
                let exchange = try await Self.exchange(port: port, "GET /healthz HTTP/1.1\r\nHost: \(value)\r\n\r\n")
                let response = try exchange.single(value)
                #expect(response.status == 400, "Host: \(value)")
                #expect(response.json["code"] as? String == "malformedRequest", "Host: \(value)")
                #expect(response.json["field"] as? String == "header:Host", "Host: \(value)")
                let message = response.json["message"] as? String ?? ""
                #expect(message.contains("RFC 9112 §3.2") && !message.contains(value), "Host: \(value): \(message)")
                #expect(exchange.closed, "Host: \(value): the connection stayed open")
            }
            let served = [
                "", "a", "127.0.0.1", "127.0.0.1:8080", "gateway.example.com", "Gateway-1.example.COM:443", "[::1]",
                "[::1]:80", "[v1.fe80::a+en1]", "xn--bcher-kva.example", "example.com:",
                "ex%41mple.com", "host_name~1",
            ]
            for value in served {
                let exchange = try await Self.exchange(
                    port: port, "GET /healthz HTTP/1.1\r\nHost: \(value)\r\nConnection: close\r\n\r\n")
                #expect(try exchange.single(value).status == 200, "Host: \(value)")
            }
        }
    }

    // MARK: Persistence (RFC 9112 §9.3, §9.6)

    /// Regression: `GET /healthz HTTP/1.0` was answered without `Connection: close` and its connection held until
    /// the 30 s idle timeout. HTTP/1.0 without `keep-alive` closes after the response (which says so); with
    /// `Connection: keep-alive` it stays open; an HTTP/1.1 `Connection: close` is answered with `Connection: close`.
    @Test func http10ClosesAfterTheResponseUnlessKeptAlive() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let port = server.client.base.port!
            let plain = try await Self.exchange(port: port, "GET /healthz HTTP/1.0\r\n\r\n", timeout: 10)
            let response = try plain.single("HTTP/1.0")
            #expect(response.status == 200)
            #expect(response.json["status"] as? String == "ok", "the whole body arrived before the close")
            #expect(response.field("connection")?.lowercased() == "close")
            #expect(plain.closed, "the connection stayed open (for the 10 s read; the idle timeout is 30 s)")

            let kept = try await Self.offThePool {
                let socket = try RawSocket(port: port, timeout: 5)
                var buffer: [UInt8] = []
                let request = "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                _ = socket.send(request)
                let closedAfterFirst = Self.readResponses(socket, into: &buffer, responses: 1, heads: [])
                _ = socket.send(request)
                _ = Self.readResponses(socket, into: &buffer, responses: 2, heads: [])
                return (closedAfterFirst, Self.parseResponses(buffer, heads: []).responses)
            }
            #expect(!kept.0, "a kept-alive HTTP/1.0 connection was closed")
            #expect(kept.1.map(\.status) == [200, 200])
            #expect(kept.1.first?.field("connection")?.lowercased() != "close")

            let close = try await Self.exchange(
                port: port, "GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            #expect(try close.single("HTTP/1.1 Connection: close").field("connection")?.lowercased() == "close")
            #expect(close.closed)
        }
    }

    // MARK: 501 (RFC 9110 §15.6.2, RFC 9112 §6.1, §6.3)

    /// Regression: `FOO /healthz` was `400` blaming headers or Content-Length. A method the server does not know is
    /// `501 methodNotImplemented` naming it; bytes that are no request line stay `400`. A transfer coding other than
    /// chunked is `501 transferCodingNotImplemented` naming it when chunked is still the final coding, else `400`
    /// (the body's length cannot be known, RFC 9112 §6.3), as is any Transfer-Encoding in HTTP/1.0 (§6.1) — not a
    /// body "malformed (chunked encoding)".
    @Test func unknownMethodsAndTransferCodingsAreNotImplemented() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let port = server.client.base.port!
            let auth = "Authorization: Bearer \(server.keys["app1"]!)"
            let send = "POST /v1/apps/app1/notifications HTTP/1.1\r\nHost: a\r\n\(auth)\r\n"
                + "Content-Type: application/json\r\n"
            let cases: [(what: String, request: String, status: Int, code: String, says: [String], field: String?)] = [
                ("FOO", "FOO /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 501, "methodNotImplemented", ["FOO"], nil),
                ("BREW", "BREW /v1/apps/app1/devices/d HTTP/1.1\r\nHost: a\r\n\r\n", 501, "methodNotImplemented",
                    ["BREW"], nil),
                ("not a request line", "HELLO\r\n\r\n", 400, "malformedRequest", [], nil),
                ("gzip, chunked", send + "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501,
                    "transferCodingNotImplemented", ["gzip"], "header:Transfer-Encoding"),
                ("gzip", send + "Transfer-Encoding: gzip\r\n\r\n{}", 400, "malformedRequest", ["gzip", "chunked"],
                    "header:Transfer-Encoding"),
                ("HTTP/1.0 chunked",
                    "POST /v1/apps/app1/notifications HTTP/1.0\r\n\(auth)\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "2\r\n{}\r\n0\r\n\r\n",
                    400, "malformedRequest", ["HTTP/1.0", "Transfer-Encoding"], "header:Transfer-Encoding"),
            ]
            for item in cases {
                let exchange = try await Self.exchange(port: port, item.request)
                let response = try exchange.single(item.what)
                #expect(response.status == item.status, "\(item.what): \(response.json)")
                #expect(response.json["code"] as? String == item.code, "\(item.what): \(response.json)")
                #expect(response.json["field"] as? String == item.field, "\(item.what): \(response.json)")
                let message = response.json["message"] as? String ?? ""
                for word in item.says { #expect(message.contains(word), "\(item.what): \(message)") }
                #expect(!message.contains("chunked encoding"), "\(item.what): \(message)")
                #expect(response.field("connection")?.lowercased() == "close", "\(item.what)")
                #expect(exchange.closed, "\(item.what): the connection stayed open")
            }
            // Pipelined behind a good request: answered in order.
            let pipelined = try await Self.exchange(
                port: port, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nFOO /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(pipelined.responses.map(\.status) == [200, 501])
            #expect(pipelined.responses.last?.json["code"] as? String == "methodNotImplemented")
        }
    }

    /// Regression: a request line that arrived in pieces was answered by the piece the parser refused — `BR`, then
    /// `EW /healthz HTTP/1.1`: `400`, the line not yet whole; `GE`, then `X /healthz HTTP/1.1`: `501` naming `X`. The
    /// method is named whole wherever the reads split its line; a line that never ends, or is no request line, is
    /// `400` (within ``ConnectionGuardHandler/refusedLineWait``).
    @Test func aMethodSplitAcrossReadsIsNamedWhole() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let port = server.client.base.port!
            let rest = " /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
            let cases: [(what: String, pieces: [String], statuses: [Int], method: String?)] = [
                ("diverging in the second read", ["GE", "X" + rest], [501], "GEX"),
                ("refused in the first read", ["BR", "EW" + rest], [501], "BREW"),
                ("refused before the target", ["FOO /heal", "thz HTTP/1.1\r\nHost: a\r\n\r\n"], [501], "FOO"),
                ("in three pieces", ["M", "KCO", "FFEE" + rest], [501], "MKCOFFEE"),
                ("behind a good request", ["GET" + rest + "PU", "X" + rest], [200, 501], "PUX"),
                ("no request line", ["HE", "LLO\r\n\r\n"], [400], nil),
                ("a line that never ends", ["BR"], [400], nil),
            ]
            for item in cases {
                let started = ContinuousClock.now
                let exchange = try await Self.exchange(port: port, inPieces: item.pieces)
                #expect(exchange.responses.map(\.status) == item.statuses, "\(item.what)")
                #expect(exchange.closed, "\(item.what): the connection stayed open")
                guard let refusal = exchange.responses.last else { continue }
                let message = refusal.json["message"] as? String ?? ""
                if let method = item.method {
                    #expect(refusal.json["code"] as? String == "methodNotImplemented", "\(item.what): \(refusal.json)")
                    #expect(message.contains("the method \(method) is not"), "\(item.what): \(message)")
                } else {
                    #expect(refusal.json["code"] as? String == "malformedRequest", "\(item.what): \(refusal.json)")
                }
                #expect(ContinuousClock.now - started < .seconds(4), "\(item.what): answered late")
            }
        }
    }
}
