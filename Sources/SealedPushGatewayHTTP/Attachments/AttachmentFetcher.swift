import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// Fetches an attachment's bytes from a backend's URL: HTTP/1.1 over TCP or TLS on SwiftNIO
/// (``OneShotHTTP1Exchange``, to the address resolved and checked here), bounded in size and time
/// (``AttachmentFetchPolicy``), into memory only.
struct AttachmentFetcher: Sendable {
    let policy: AttachmentFetchPolicy
    let budget: FetchBudget
    let group: any EventLoopGroup
    /// Built once (it loads the trust roots), shared by every `https` fetch; nil when the policy's TLS is unusable.
    private let sslContext: NIOSSLContext?

    init(policy: AttachmentFetchPolicy, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.policy = policy
        self.budget = FetchBudget(limit: policy.maxBytesInFlight)
        self.group = group
        self.sslContext = try? NIOSSLContext(configuration: policy.tls)
    }

    /// Fetches `url`, at most `limit` bytes.
    /// - Parameters:
    ///   - url: An `http(s)` URL (checked against the policy).
    ///   - limit: The most bytes accepted (the media kind's cap).
    ///   - field: The request field named in errors (`attachments[i].url`).
    /// - Returns: The body; the caller zeroes it after use.
    /// - Throws: ``GatewayAPIError``: `422 attachmentUnavailable` (refused URL, connection, status, deadline),
    ///   `422 blobTooLarge` (more than `limit` bytes), `503` when the gateway-wide fetch budget is spent.
    func fetch(_ url: URL, limit: Int, field: String) async throws -> [UInt8] {
        let scheme = url.scheme?.lowercased() ?? ""
        let host = (url.host ?? "").lowercased()
        func unavailable(_ why: String) -> GatewayAPIError {
            GatewayAPIError(.unprocessableContent, "attachmentUnavailable", "\(field): \(why)", field: field)
        }
        guard scheme == "https" || (scheme == "http" && policy.allowHTTP) else {
            throw unavailable("this gateway fetches https URLs only")
        }
        if let allowed = policy.allowedHosts, !allowed.contains(host) {
            throw unavailable("the host \(host) is not among the hosts this gateway fetches from")
        }
        guard budget.reserve(limit) else {
            throw GatewayAPIError(
                .serviceUnavailable, "unavailable", "too many attachments are being fetched at once; retry later")
        }
        defer { budget.release(limit) }

        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        // Resolve once, check the address, and connect to that very address (no second lookup to rebind).
        let address: SocketAddress
        do {
            address = try await NIOThreadPool.singleton.runIfActive {
                try SocketAddress.makeAddressResolvingHost(host, port: port)
            }
        } catch {
            throw unavailable("the host \(host) cannot be resolved")
        }
        if !policy.allowPrivateAddresses, PrivateAddress.contains(address) {
            throw unavailable("the host \(host) resolves to a loopback, private or link-local address, which this gateway does not fetch from")
        }
        let hostHeader = (host.contains(":") ? "[\(host)]" : host) + (url.port.map { ":\($0)" } ?? "")
        let sslContext = scheme == "https" ? self.sslContext : nil
        if scheme == "https", sslContext == nil { throw unavailable("the gateway's TLS configuration is unusable") }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: hostHeader)
        headers.add(name: "Accept-Encoding", value: "identity")
        headers.add(name: "Connection", value: "close")
        headers.add(name: "User-Agent", value: SealedPushVersion.userAgent("sealed-push-gateway"))
        // Head and end in one write (a server that answers on the head and closes must not fail the second).
        let request: [HTTPClientRequestPart] = [
            .head(HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)), .end(nil),
        ]
        let body: [UInt8]
        do {
            body = try await OneShotHTTP1Exchange.run(
                to: .address(address), tls: sslContext, serverName: host, timeout: policy.timeout, group: group,
                request: request
            ) { inbound in
                var body: [UInt8] = []
                do {
                    var sawHead = false
                    var ended = false
                    loop: for try await part in inbound {
                        switch part {
                        case .head(let head):
                            if head.status.code < 200 { continue }
                            guard head.status == .ok else {
                                throw unavailable(
                                    "\(host) answered HTTP status \(head.status.code), not 200 (redirects are not followed)")
                            }
                            sawHead = true
                        case .body(let buffer):
                            guard body.count + buffer.readableBytes <= limit else {
                                throw GatewayAPIError(
                                    .unprocessableContent, "blobTooLarge",
                                    "\(field): \(host) sent more than \(limit) bytes, the cap for this media type",
                                    field: field, limit: limit)
                            }
                            buffer.withUnsafeReadableBytes { body.append(contentsOf: $0) }
                        case .end:
                            ended = true
                            break loop
                        }
                    }
                    guard sawHead else { throw unavailable("\(host) closed the connection without answering") }
                    // Closed before the body's end (by the peer, or by the deadline): a part of a file is no file.
                    guard ended else { throw unavailable("\(host) closed the connection before the body ended") }
                    return body
                } catch {
                    Sodium.wipe(&body)
                    throw error
                }
            }
        } catch OneShotHTTP1Exchange.Failure.connect {
            throw unavailable("cannot connect to \(host)")
        } catch OneShotHTTP1Exchange.Failure.timedOut {
            throw unavailable("fetching from \(host) did not finish within \(policy.timeout)")
        } catch let error as GatewayAPIError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw unavailable("the connection to \(host) failed")
        }
        guard !body.isEmpty else { throw unavailable("\(host) sent an empty body") }
        return body
    }

}

/// The gateway-wide bound on attachment bytes being fetched at once.
final class FetchBudget: Sendable {
    private let limit: Int
    private let used = NIOLockedValueBox(0)

    init(limit: Int) { self.limit = limit }

    func reserve(_ bytes: Int) -> Bool {
        used.withLockedValue { used in
            guard used + bytes <= limit || used == 0 else { return false }
            used += bytes
            return true
        }
    }

    func release(_ bytes: Int) { used.withLockedValue { $0 -= bytes } }
}
