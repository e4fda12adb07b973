#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An HTTP proxy through which the APNs and FCM clients reach their providers, as networks that allow no direct
/// connection out require: each connection asks the proxy for a tunnel with `CONNECT host:port` (RFC 9110 §9.3.6)
/// and runs TLS and HTTP/2 to the provider inside it. The proxy sees which provider host and port a connection goes
/// to, never what it carries (sealed envelopes, device tokens, provider credentials).
///
/// Only a plain `http://` proxy: the tunnel already carries TLS to the provider end to end. Credentials, when the
/// proxy asks for them, go in a `Proxy-Authorization: Basic` header; they never appear in ``description`` or in an
/// error.
///
/// ```swift
/// var apns = APNsClientConfiguration(endpoint: .production)
/// apns.proxy = try ProviderProxy(url: "http://egress.internal:3128")
/// ```
public struct ProviderProxy: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The proxy's host name or IP address (an IPv6 address without brackets).
    public let host: String
    /// The proxy's port.
    public let port: Int
    /// The user name sent to the proxy, if any.
    public let username: String?
    private let password: String?

    /// A proxy by its parts.
    /// - Parameters:
    ///   - host: Its host name or IP address.
    ///   - port: Its port, 1 to 65535.
    ///   - username: A user name for `Proxy-Authorization: Basic`, or nil for none.
    ///   - password: That user's password (only with a user name).
    /// - Throws: `SealedPushError` `invalidArgument` naming what is wrong.
    public init(host: String, port: Int, username: String? = nil, password: String? = nil) throws {
        guard !host.isEmpty, host.utf8.count <= 253, host.utf8.allSatisfy(Self.isHostByte) else {
            throw SealedPushError(
                .invalidArgument,
                "the proxy's host must be a host name or an IP address: letters, digits, '-', '.', '_' and ':' "
                    + "(got '\(host)')")
        }
        guard (1...65_535).contains(port) else {
            throw SealedPushError(.invalidArgument, "the proxy's port must be 1 to 65535 (got \(port))")
        }
        if let username {
            guard !username.isEmpty, !username.contains(":") else {
                throw SealedPushError(
                    .invalidArgument, "the proxy's user name must be non-empty and without ':' (RFC 7617)")
            }
        } else if password != nil {
            throw SealedPushError(.invalidArgument, "a proxy password needs a user name")
        }
        for (name, value) in [("user name", username), ("password", password)] {
            if let value, value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw SealedPushError(.invalidArgument, "the proxy's \(name) must not hold control characters")
            }
        }
        self.host = host
        self.port = port
        self.username = username
        self.password = username == nil ? nil : (password ?? "")
    }

    /// A proxy by its URL: `http://host:port`, or `http://user:password@host:port` (user and password
    /// percent-encoded where they hold `:`, `@`, `/` or `%`), an IPv6 address in brackets.
    /// - Parameter text: The URL.
    /// - Throws: `SealedPushError` `invalidArgument` naming what is wrong (never echoing a password).
    public init(url text: String) throws {
        let schemeEnd = text.firstRange(of: "://")
        guard let schemeEnd else {
            throw SealedPushError(.invalidArgument, "a proxy is a URL like http://host:port (no '://' found)")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" else {
            throw SealedPushError(
                .invalidArgument,
                "the proxy's scheme must be http (got '\(scheme)'): the tunnel through it carries TLS to the provider "
                    + "end to end, so TLS to the proxy itself is not used")
        }
        var rest = text[schemeEnd.upperBound...]
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains(where: { "/?#".contains($0) }) else {
            throw SealedPushError(.invalidArgument, "a proxy URL has no path, query or fragment: http://host:port")
        }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = Self.percentDecoded(parts[0]),
                parts.count == 1 || Self.percentDecoded(parts[1]) != nil
            else {
                throw SealedPushError(.invalidArgument, "the proxy URL's user name or password is badly percent-encoded")
            }
            username = user
            password = parts.count == 2 ? Self.percentDecoded(parts[1]) : nil
        }
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
                throw SealedPushError(.invalidArgument, "a proxy URL names its port: http://[IPv6 address]:port")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            portText = rest[rest.index(close, offsetBy: 2)...]
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                throw SealedPushError(.invalidArgument, "a proxy URL names its port: http://host:port")
            }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
            portText.count <= 5, let port = Int(portText)
        else {
            throw SealedPushError(.invalidArgument, "the proxy's port must be a number, 1 to 65535 (got '\(portText)')")
        }
        try self.init(host: String(host), port: port, username: username, password: password)
    }

    /// This proxy with the user and password a credentials file holds: `user:password` on one line (a final newline
    /// ignored), UTF-8, the user without `:`. Kept out of URLs and command lines, which others can read.
    /// - Parameter contents: The file's bytes (the caller zeroes them).
    /// - Returns: The proxy with those credentials.
    /// - Throws: `SealedPushError` `invalidArgument` saying what the file must hold (never echoing it).
    public func withCredentials(fromFile contents: [UInt8]) throws -> ProviderProxy {
        var end = contents.endIndex
        while end > contents.startIndex, contents[end - 1] == 0x0A || contents[end - 1] == 0x0D { end -= 1 }
        let line = contents[..<end]
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            let user = String(validating: line[..<colon], as: UTF8.self),
            let password = String(validating: line[(colon + 1)...], as: UTF8.self)
        else {
            throw SealedPushError(
                .invalidArgument, "a proxy credentials file holds user:password (one line, UTF-8, the user without ':')")
        }
        return try ProviderProxy(host: host, port: port, username: user, password: password)
    }

    /// `http://host:port`, with the user name when there is one; never the password.
    public var description: String {
        "http://" + (username.map { $0 + ":…@" } ?? "") + Self.authority(host: host, port: port)
    }

    /// The fields without the password (`dump`, the debugger).
    public var customMirror: Mirror {
        Mirror(self, children: ["host": host, "port": port, "username": username as Any], displayStyle: .struct)
    }

    /// The `Proxy-Authorization` header's value (`Basic` and the base64 of `user:password`), if there are
    /// credentials. A secret: never logged.
    package var authorization: String? {
        guard let username else { return nil }
        return "Basic " + Data((username + ":" + (password ?? "")).utf8).base64EncodedString()
    }

    /// `host:port` as a `CONNECT` request's target and `Host` header write it (an IPv6 address in brackets).
    /// - Parameters:
    ///   - host: A host name or IP address.
    ///   - port: A port.
    /// - Returns: The authority.
    package static func authority(host: String, port: Int) -> String {
        (host.contains(":") ? "[" + host + "]" : host) + ":" + String(port)
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(URICharacters.hexValue), let low = utf8.next().flatMap(URICharacters.hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// A byte of a host name or an IP address (IPv6 without brackets).
    private static func isHostByte(_ byte: UInt8) -> Bool {
        byte != UInt8(ascii: "~") && (URICharacters.isUnreserved(byte) || byte == UInt8(ascii: ":"))
    }
}
