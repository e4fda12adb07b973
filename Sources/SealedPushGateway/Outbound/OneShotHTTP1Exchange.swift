import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 request on a connection of its own (TLS when given a context), closed after the answer, within one
/// deadline that covers connecting, sending and reading — the gateway's outbound calls to a backend's URLs (the
/// webhook's `POST`, an attachment's `GET`).
///
/// It follows nothing (a redirect is an answer like any other), reads no proxy from the environment and adds no
/// header: the caller writes the whole request and reads the answer's parts. A cancelled task closes the connection.
package enum OneShotHTTP1Exchange {
    /// Where to connect.
    package enum Endpoint: Sendable {
        /// A host name or address text, resolved by the connect.
        case host(String, port: Int)
        /// An address already resolved (and checked) by the caller: no second lookup.
        case address(SocketAddress)
    }

    /// Why an exchange failed outside the caller's reading.
    package enum Failure: Error {
        /// The connection (or its TLS handshake) could not be made.
        case connect(any Error)
        /// The deadline passed (while connecting, or after): the connection was closed.
        case timedOut
    }

    /// Connects, writes `request`, and hands the answer's parts to `read`; the connection is closed afterwards.
    /// - Parameters:
    ///   - endpoint: Where to connect.
    ///   - tls: The TLS context for `https`; nil for plain HTTP.
    ///   - serverName: The name the certificate is checked against and sent as SNI (none when it is an address).
    ///   - timeout: The most time the whole exchange may take, connecting included.
    ///   - group: The event loops.
    ///   - request: The request's parts (head, body, end), written at once.
    ///   - read: Reads the answer's parts; what it returns is the exchange's result. The deadline ends the stream of
    ///     parts early (the connection closed), so `read` must not take a stream that ended before the part it
    ///     needs (the answer's head, the body's end) as a whole answer: it throws then.
    /// - Returns: What `read` returned (a result it completed is returned even if the deadline passed just after).
    /// - Throws: ``Failure`` (`timedOut` when `read` threw after the deadline closed the connection),
    ///   `CancellationError` when the task was cancelled, or else what `read` or the connection threw (a reset, a TLS
    ///   or HTTP parsing error: NIO's errors, whose text names addresses, never URLs).
    package static func run<Result: Sendable>(
        to endpoint: Endpoint, tls: NIOSSLContext?, serverName: String, timeout: Duration,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, request: [HTTPClientRequestPart],
        read: (NIOAsyncChannelInboundStream<HTTPClientResponsePart>) async throws -> Result
    ) async throws -> Result {
        let nanoseconds = max(0, timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        let deadline = NIODeadline.now() + .nanoseconds(nanoseconds)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<
            NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        > = { channel in
            channel.eventLoop.makeCompletedFuture {
                let pipeline = channel.pipeline.syncOperations
                if let tls {
                    let isAddress = (try? SocketAddress(ipAddress: serverName, port: 0)) != nil
                    try pipeline.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: isAddress ? nil : serverName))
                }
                try pipeline.addHTTPClientHandlers()
                return try NIOAsyncChannel(wrappingChannelSynchronously: channel)
            }
        }
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            let bootstrap = ClientBootstrap(group: group).connectTimeout(.nanoseconds(nanoseconds))
            switch endpoint {
            case .host(let host, let port):
                channel = try await bootstrap.connect(host: host, port: port, channelInitializer: initializer)
            case .address(let address):
                channel = try await bootstrap.connect(to: address, channelInitializer: initializer)
            }
        } catch ChannelError.connectTimeout {
            throw Task.isCancelled ? CancellationError() : Failure.timedOut  // the connect took the whole deadline
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw Failure.connect(error)
        }
        let raw = channel.channel
        let timedOut = NIOLockedValueBox(false)
        let timer = raw.eventLoop.scheduleTask(deadline: deadline) {
            timedOut.withLockedValue { $0 = true }
            raw.close(promise: nil)
        }
        defer { timer.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(contentsOf: request)
                    return try await read(inbound)
                }
            } onCancel: {
                raw.close(promise: nil)
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            if timedOut.withLockedValue({ $0 }) { throw Failure.timedOut }
            throw error
        }
    }
}
