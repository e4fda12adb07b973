import NIOCore
import NIOPosix

/// A raw HTTP/1.1 exchange over a real loopback socket: sends exactly the bytes given and reads until the server
/// closes, so tests see the server's bytes as they are (no client library in between).
enum RawHTTPClient {
    struct Response {
        let status: Int
        let headers: [String: String]  // lowercased names; a repeated header keeps the last value
        let body: [UInt8]
    }

    /// Sends `request` and returns everything the server sends until it closes (or `limit` bytes).
    static func exchange(port: Int, _ request: String, limit: Int = 128 << 20) async throws -> [UInt8] {
        let channel = try await connect(port: port)
        return try await channel.executeThenClose { inbound, outbound in
            var received: [UInt8] = []
            do { try await outbound.write(ByteBuffer(string: request)) } catch { return received }  // already closed
            for try await buffer in inbound {
                received += buffer.readableBytesView
                if received.count >= limit { break }
            }
            return received
        }
    }

    /// Sends one request with `Connection: close` and parses the single response.
    static func send(
        port: Int, method: String = "GET", path: String, headers: [String: String] = [:]
    ) async throws -> Response {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        return try parse(try await exchange(port: port, text))
    }

    /// Connects; `receiveBuffer` fixes the socket's receive buffer (no autotuning), so a client that stops reading
    /// holds only that much in its kernel.
    static func connect(port: Int, receiveBuffer: Int? = nil) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let receiveBuffer {
            bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer))
        }
        return try await bootstrap
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
    }

    struct ParseError: Error {}

    /// Parses one response (body delimited by the end of the bytes).
    static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { throw ParseError() }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw ParseError() }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw ParseError() }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
    }
}
