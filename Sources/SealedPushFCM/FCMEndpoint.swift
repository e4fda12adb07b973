import Foundation
import SealedPushCore

/// Where an HTTPS service is: host, port and, for emulators, the one certificate to trust.
public struct FCMEndpoint: Sendable, Hashable {
    /// FCM's production host.
    public static let production = FCMEndpoint(host: "fcm.googleapis.com", port: 443)

    /// The host name or IP address.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// A PEM certificate to trust instead of the system roots (an emulator's); nil trusts the system roots.
    public var trustedCertificatePEM: String?
    /// A path prefix before `/v1/…` (empty for FCM; the token endpoint's path comes from its URL).
    public var pathPrefix: String

    /// Creates an endpoint.
    /// - Parameters:
    ///   - host: Host name or IP address.
    ///   - port: TCP port.
    ///   - trustedCertificatePEM: A certificate to trust instead of the system roots.
    ///   - pathPrefix: A path prefix (default none).
    public init(host: String, port: Int, trustedCertificatePEM: String? = nil, pathPrefix: String = "") {
        self.host = host
        self.port = port
        self.trustedCertificatePEM = trustedCertificatePEM
        self.pathPrefix = pathPrefix
    }

    /// Parses an `https://host[:port][/path]` URL.
    /// - Parameters:
    ///   - url: The URL.
    ///   - trustedCertificatePEM: A certificate to trust instead of the system roots.
    /// - Returns: The endpoint and the URL's path (with its query).
    /// - Throws: `SealedPushError` (`invalidArgument`) for anything but an https URL with a host.
    public static func parse(_ url: String, trustedCertificatePEM: String? = nil) throws -> (FCMEndpoint, path: String) {
        guard let components = URLComponents(string: url), components.scheme == "https", let host = components.host,
            !host.isEmpty
        else { throw SealedPushError(.invalidArgument, "\(url.prefix(200)) is not an https URL with a host") }
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        let bareHost = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return (FCMEndpoint(host: bareHost, port: components.port ?? 443, trustedCertificatePEM: trustedCertificatePEM), path)
    }

    /// `:authority`: the host, and the port unless it is 443.
    var authority: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port == 443 ? shown : "\(shown):\(port)"
    }

    /// Whether ``host`` is an IP address (no SNI then).
    var isIPAddress: Bool { host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil } }
}
