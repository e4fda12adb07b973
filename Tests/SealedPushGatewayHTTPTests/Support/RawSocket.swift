import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking TCP client socket to 127.0.0.1 (POSIX, no HTTP library in between): tests send exactly the bytes they
/// mean, including broken HTTP, and see what the server accepted and answered. Use it off the cooperative pool
/// (`Task.detached` is fine for the short blocking calls with their timeouts).
final class RawSocket: @unchecked Sendable {  // one task uses it at a time
    let descriptor: Int32
    /// Every byte received so far.
    private(set) var received: [UInt8] = []

    /// Connects, with send and receive timeouts (a server that stops reading cannot hang the test).
    /// - Parameters:
    ///   - port: The port on 127.0.0.1.
    ///   - sendBuffer: The socket's send buffer (smaller: fewer bytes sit in the client's kernel).
    ///   - timeout: The send and receive timeout, in seconds.
    init(port: Int, sendBuffer: Int32? = nil, timeout: Int = 10) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket failed") }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        if var sendBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw TestFailure("cannot connect to 127.0.0.1:\(port)")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Sends all of `bytes`; false when the connection refused them (closed, reset, or the send timed out).
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads what has already arrived, without waiting.
    func drainAvailable() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { return }
            received += buffer[..<count]
        }
    }

    /// Reads until the server closes (or resets, or the receive timeout passes).
    /// - Returns: Whether the server ended the connection (as opposed to the timeout passing).
    @discardableResult
    func readToEnd() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
                continue
            }
            if count == 0 { return true }
            return errno != EAGAIN && errno != EWOULDBLOCK
        }
    }

    /// The first response received: its status and its body as a JSON object (empty when not JSON).
    func response() -> RawResponse {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = received.indices.first(where: { received[$0...].starts(with: separator) }) else {
            return RawResponse(status: 0, headers: "", json: [:])
        }
        let head = String(decoding: received[..<end], as: UTF8.self)
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        var body = Array(received[(end + 4)...])
        if let length = head.lowercased().components(separatedBy: "\r\n")
            .first(where: { $0.hasPrefix("content-length:") })
            .flatMap({ Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }),
            length <= body.count
        {
            body = Array(body[..<length])
        }
        let json = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        return RawResponse(status: status, headers: head, json: json)
    }
}

/// A response as ``RawSocket`` read it: the status, the head's text, and the body as a JSON object (empty when not).
struct RawResponse: @unchecked Sendable {  // the JSON object is only read
    let status: Int
    let headers: String
    let json: [String: Any]
}
