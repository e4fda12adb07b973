import SealedPushCore

/// Where APNs (or an emulator) listens.
public struct APNsEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP address.
    public let host: String
    /// The TCP port.
    public let port: Int

    /// Creates an endpoint.
    /// - Parameters:
    ///   - host: A host name or IP address.
    ///   - port: The TCP port (default 443).
    public init(host: String, port: Int = 443) {
        self.host = host
        self.port = port
    }

    /// Apple's production service.
    public static let production = APNsEndpoint(host: "api.push.apple.com")
    /// Apple's sandbox (development) service.
    public static let sandbox = APNsEndpoint(host: "api.development.push.apple.com")

    /// Parses `https://host[:port]` (an IPv6 host in brackets).
    /// - Parameter url: The URL; a path, query or other scheme is rejected.
    /// - Throws: `SealedPushError` with code `.invalidArgument`.
    public init(url: String) throws {
        let scheme = "https://"
        guard url.lowercased().hasPrefix(scheme) else {
            throw SealedPushError(.invalidArgument, "the endpoint must be https://host[:port] (got \(url))")
        }
        var rest = Substring(url.dropFirst(scheme.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("@") else {
            throw SealedPushError(
                .invalidArgument, "the endpoint must be https://host[:port] without a path (got \(url))")
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw SealedPushError(.invalidArgument, "unterminated IPv6 address in \(url)")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw SealedPushError(.invalidArgument, "bad port in \(url)") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        var port = 443
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                throw SealedPushError(.invalidArgument, "the port must be 1...65535 (got \(portText))")
            }
            port = value
        }
        guard !host.isEmpty else { throw SealedPushError(.invalidArgument, "no host in \(url)") }
        self.init(host: String(host), port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether the host is an IP literal (no SNI then; the certificate must name the IP).
    var isIPAddress: Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}
