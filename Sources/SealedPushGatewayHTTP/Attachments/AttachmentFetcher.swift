import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SealedPushCore
import SealedPushServer

/// Fetches an attachment's bytes from a backend's URL: HTTP/1.1 over TCP or TLS on SwiftNIO, bounded in size and
/// time (``AttachmentFetchPolicy``), into memory only.
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
        let deadline = NIODeadline.now() + .nanoseconds(Self.nanoseconds(policy.timeout))
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(.nanoseconds(Self.nanoseconds(policy.timeout)))
                .connect(to: address) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let sslContext {
                            let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
                            try pipeline.addHandler(
                                try NIOSSLClientHandler(context: sslContext, serverHostname: isAddress ? nil : host))
                        }
                        try pipeline.addHTTPClientHandlers()
                        return try NIOAsyncChannel(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw unavailable("cannot connect to \(host)")
        }
        let raw = channel.channel
        let timedOut = FetchFlag()
        let timer = raw.eventLoop.scheduleTask(deadline: deadline) {
            timedOut.set()
            raw.close(promise: nil)
        }
        defer { timer.cancel() }
        var body: [UInt8] = []
        do {
            try await channel.executeThenClose { inbound, outbound in
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: hostHeader)
                headers.add(name: "Accept-Encoding", value: "identity")
                headers.add(name: "Connection", value: "close")
                headers.add(name: "User-Agent", value: "sealed-push-gateway")
                // Head and end in one write (a server that answers on the head and closes must not fail the second).
                try await outbound.write(contentsOf: [
                    .head(HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)), .end(nil),
                ])
                var sawHead = false
                loop: for try await part in inbound {
                    switch part {
                    case .head(let head):
                        if head.status.code < 200 { continue }
                        guard head.status == .ok else {
                            throw unavailable("\(host) answered HTTP status \(head.status.code), not 200 (redirects are not followed)")
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
                        break loop
                    }
                }
                if timedOut.isSet { throw unavailable("fetching from \(host) did not finish within \(policy.timeout)") }
                guard sawHead else { throw unavailable("\(host) closed the connection without answering") }
            }
        } catch let error as GatewayAPIError {
            Sodium.wipe(&body)
            throw error
        } catch {
            Sodium.wipe(&body)
            throw unavailable(
                timedOut.isSet
                    ? "fetching from \(host) did not finish within \(policy.timeout)"
                    : "the connection to \(host) failed")
        }
        if timedOut.isSet {
            Sodium.wipe(&body)
            throw unavailable("fetching from \(host) did not finish within \(policy.timeout)")
        }
        guard !body.isEmpty else { throw unavailable("\(host) sent an empty body") }
        return body
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        return max(0, parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
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

/// Set once, from the event loop (the deadline) and read after.
final class FetchFlag: Sendable {
    private let value = NIOLockedValueBox(false)
    func set() { value.withLockedValue { $0 = true } }
    var isSet: Bool { value.withLockedValue { $0 } }
}
