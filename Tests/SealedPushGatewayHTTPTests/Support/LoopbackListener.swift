import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP socket bound to 127.0.0.1 on a free port and listening: the kernel accepts connections into its backlog,
/// nobody ever answers. Also a way to learn a free port (close it at once).
final class LoopbackListener {
    let descriptor: Int32
    let port: Int
    private var clients: [Int32] = []

    /// - Parameter backlog: `listen`'s backlog: with 0 the kernel queues one connection and drops the SYNs of the
    ///   next ones (``fillBacklog()``), so a connect to it hangs.
    init(backlog: Int32 = 8) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0, listen(descriptor, backlog) == 0 else {
            close(descriptor)
            throw TestFailure("cannot listen on 127.0.0.1")
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Opens `count` connections that nobody accepts (non-blocking, kept until the listener goes): with a backlog of 0
    /// they fill the kernel's queue, and a further connect waits for a SYN-ACK that does not come.
    func fillBacklog(count: Int = 4) {
        for _ in 0..<count {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            clients.append(client)
        }
    }

    /// A port that was free a moment ago.
    static func freePort() throws -> Int { try LoopbackListener().port }

    deinit {
        for client in clients { close(client) }
        close(descriptor)
    }
}
