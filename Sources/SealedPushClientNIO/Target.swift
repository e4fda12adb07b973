import Foundation
import SealedPushCore

/// Where a blob URL points: scheme, host, port and the request target of an HTTP/1.1 `GET`.
struct Target: Sendable {
    /// The host, without brackets for an IPv6 literal.
    let host: String
    let port: Int
    /// Whether the URL is `https`.
    let tls: Bool
    /// The path and query as sent in the request line (`/` for an empty path).
    let requestTarget: String
    /// The `Host` header: the host (bracketed if IPv6) and the port unless it is the scheme's default.
    let hostHeader: String

    /// - Throws: `invalidArgument` for a URL that is not `http` or `https`, or has no host.
    init(_ url: URL) throws {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            throw SealedPushError(.invalidArgument, "a blob URL must be http or https")
        }
        guard var host = components.host, !host.isEmpty else {
            throw SealedPushError(.invalidArgument, "a blob URL has no host")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let tls = scheme == "https"
        let defaultPort = tls ? 443 : 80
        let port = components.port ?? defaultPort
        guard (1...65_535).contains(port) else { throw SealedPushError(.invalidArgument, "a blob URL's port is out of range") }
        var requestTarget = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { requestTarget += "?" + query }
        let hostText = host.contains(":") ? "[\(host)]" : host
        self.host = host
        self.port = port
        self.tls = tls
        self.requestTarget = requestTarget
        self.hostHeader = port == defaultPort ? hostText : "\(hostText):\(port)"
    }
}

extension String {
    /// Whether this is an IPv4 or IPv6 literal (no server name to send in TLS's SNI).
    var isIPAddress: Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, self, &v4) == 1 || inet_pton(AF_INET6, self, &v6) == 1
    }
}
