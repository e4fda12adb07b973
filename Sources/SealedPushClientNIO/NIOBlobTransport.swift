import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SealedPushClient
import SealedPushCore

/// A ``BlobTransport`` on SwiftNIO: HTTP/1.1 over plain TCP or TLS, for servers, command-line tools and Linux,
/// where Foundation's `URLSession` buffers a body without limit.
///
/// The body is read only as fast as `receive` takes it: the connection's inbound stream stops reading the socket
/// when a few buffers wait, so a 50 MB video held back by a slow disk costs a few socket buffers, not 50 MB.
/// Like ``URLSessionBlobTransport`` it counts the bytes itself and never trusts `Content-Length`, and it ends the
/// download as soon as it must: more than `expectedBytes` arrived (`blobTrailingData`, after the bytes up to the end went to `receive`), the connection ended short
/// (`blobTruncated`), a status other than `200` or a failed connection (`blobUnavailable`), the deadline
/// (`deadlineExceeded`, connecting included), cancellation (`CancellationError`), or `receive` threw (that error).
/// Messages name the host, never the URL's path (a blob's name is its capability).
///
/// ```swift
/// let transport = NIOBlobTransport()
/// let attachments = AttachmentConfiguration(transport: transport, directory: directory)
/// ```
public struct NIOBlobTransport: BlobTransport {
    private let group: any EventLoopGroup
    private let tlsConfiguration: TLSConfiguration

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - group: The event loops to run connections on (default: NIO's shared singleton).
    ///   - tlsConfiguration: TLS for `https` URLs (default: the system's trust roots, TLS 1.2 or later).
    public init(
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        tlsConfiguration: TLSConfiguration = .makeClientConfiguration()
    ) {
        self.group = group
        self.tlsConfiguration = tlsConfiguration
    }

    public func download(
        from url: URL, expectedBytes: Int, deadline: ContinuousClock.Instant,
        receive: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws {
        try Task.checkCancellation()
        let target = try Target(url)
        guard expectedBytes >= 0 else {
            throw SealedPushError(.invalidArgument, "a blob's expected size cannot be negative")
        }
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else {
            throw SealedPushError(.deadlineExceeded, "no time was left to download a blob from \(target.host)")
        }
        let sslContext: NIOSSLContext?
        do {
            sslContext = target.tls ? try NIOSSLContext(configuration: tlsConfiguration) : nil
        } catch {
            throw SealedPushError(.invalidArgument, "the TLS configuration for \(target.host) is unusable: \(error)")
        }

        let ending = DownloadEnding()
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(.nanoseconds(Self.nanoseconds(remaining)))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: target.host, port: target.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let sslContext {
                            let serverName = target.host.isIPAddress ? nil : target.host
                            try pipeline.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                        }
                        try pipeline.addHTTPClientHandlers()
                        return try NIOAsyncChannel(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            if ContinuousClock.now >= deadline {
                throw SealedPushError(.deadlineExceeded, "connecting to \(target.host) did not finish by the deadline")
            }
            try Task.checkCancellation()
            throw SealedPushError(.blobUnavailable, "cannot connect to \(target.host): \(Self.describe(error))")
        }

        // The deadline and cancellation end the download by closing the connection; `ending` says why.
        let raw = channel.channel
        let timer = raw.eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(ContinuousClock.now.duration(to: deadline)))) {
            ending.set(.deadline)
            raw.close(promise: nil)
        }
        defer { timer.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await channel.executeThenClose { inbound, outbound in
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: target.hostHeader)
                    headers.add(name: "Accept-Encoding", value: "identity")
                    headers.add(name: "Connection", value: "close")
                    // Head and end in one write: a server that answers on the head and closes could otherwise close the
                    // channel between two writes, and the second would fail with the whole answer already received.
                    try await outbound.write(contentsOf: [
                        .head(HTTPRequestHead(version: .http1_1, method: .GET, uri: target.requestTarget, headers: headers)),
                        .end(nil),
                    ])
                    try await Self.readBody(
                        inbound, host: target.host, expectedBytes: expectedBytes, ending: ending, receive: receive)
                }
            } onCancel: {
                ending.set(.cancelled)
                raw.close(promise: nil)
            }
        } catch {
            switch ending.value {
            case .deadline:
                throw SealedPushError(.deadlineExceeded, "the download from \(target.host) did not finish by the deadline")
            case .cancelled: throw CancellationError()
            case .none: break
            }
            if error is SealedPushError || error is CancellationError { throw error }
            if ending.receiveFailed { throw error }  // what `receive` threw, as it threw it
            throw SealedPushError(.blobUnavailable, "the connection to \(target.host) failed: \(Self.describe(error))")
        }
    }

    /// Reads the response: a `200` head, then the body into `receive`, counting; returns at its end.
    private static func readBody(
        _ inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>, host: String, expectedBytes: Int,
        ending: DownloadEnding, receive: (UnsafeRawBufferPointer) throws -> Void
    ) async throws {
        var received = 0
        var sawHead = false
        var parts = inbound.makeAsyncIterator()
        while true {
            let next: HTTPClientResponsePart?
            do {
                next = try await parts.next()
            } catch {
                // Every expected byte arrived (and `receive` took them): a connection that then closes short of a
                // larger Content-Length does not matter.
                if sawHead, received == expectedBytes { return }
                throw error
            }
            guard let part = next else { break }
            switch part {
            case .head(let head):
                // 1xx heads are informational; the final head follows.
                if head.status.code < 200 { continue }
                guard head.status == .ok else {
                    throw SealedPushError(.blobUnavailable, "\(host) answered HTTP status \(head.status.code), not 200")
                }
                sawHead = true
            case .body(let buffer):
                // Only the bytes up to the blob's end go to `receive`, so a chunk that fails there is reported
                // first; a byte past the end is `blobTrailingData` (Specs/blob-v1.md §5), whatever the split.
                let room = expectedBytes - received
                let taken = min(room, buffer.readableBytes)
                received += taken
                do {
                    if taken > 0 {
                        try buffer.withUnsafeReadableBytes { try receive(UnsafeRawBufferPointer(rebasing: $0.prefix(taken))) }
                    }
                } catch {
                    ending.receiveFailed = true
                    throw error
                }
                guard taken == buffer.readableBytes else {
                    throw SealedPushError(
                        .blobTrailingData,
                        "\(host) sent more than the blob's \(expectedBytes) bytes (Content-Length is not trusted)")
                }
            case .end:
                guard received == expectedBytes else {
                    throw SealedPushError(
                        .blobTruncated, "\(host) ended the blob after \(received) of its \(expectedBytes) bytes")
                }
                return
            }
        }
        // The connection closed without the response's end (a close-delimited or cut-short body).
        guard sawHead else { throw SealedPushError(.blobUnavailable, "\(host) closed the connection without answering") }
        guard received == expectedBytes else {
            throw SealedPushError(.blobTruncated, "\(host) ended the blob after \(received) of its \(expectedBytes) bytes")
        }
    }

    /// A description of a transport error that names neither the URL nor its path.
    private static func describe(_ error: any Error) -> String {
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNRESET, EPIPE: return "the connection was reset"
            case ECONNREFUSED: return "the connection was refused"
            case ETIMEDOUT: return "the connection timed out"
            default: return "I/O error \(error.errnoCode)"
            }
        }
        if error is NIOSSLError || error is BoringSSLError { return "the TLS connection failed" }
        if let error = error as? ChannelError, case .connectTimeout = error { return "connecting timed out" }
        return String(describing: type(of: error))
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        let (seconds, overflow) = parts.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : max(0, seconds &+ parts.attoseconds / 1_000_000_000)
    }
}

/// Why a download was ended from outside its read loop, and whether `receive` threw.
private final class DownloadEnding: @unchecked Sendable {
    enum Reason { case deadline, cancelled }
    private let lock = NSLock()
    private var reason: Reason?
    private var receiveThrew = false

    var value: Reason? { lock.withLock { reason } }
    var receiveFailed: Bool {
        get { lock.withLock { receiveThrew } }
        set { lock.withLock { receiveThrew = newValue } }
    }

    /// Records the first reason only.
    func set(_ newReason: Reason) {
        lock.withLock { if reason == nil { reason = newReason } }
    }
}
