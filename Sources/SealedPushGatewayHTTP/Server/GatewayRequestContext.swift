import Foundation
import Hummingbird
import NIOCore

/// The API's request context: Hummingbird's basic one plus the address of the connection's peer, which the receipt
/// endpoint limits refused receipts by (``ReceiptIntake``: the only route without an API key).
struct GatewayRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection, whose peer is read only when a route asks (the receipts endpoint), not for every send.
    private let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// The peer of the connection (behind a reverse proxy, the proxy).
    var remoteAddress: SocketAddress? { channel.remoteAddress }

    /// The peer's IP address as text (its port left out: one client, many connections), or `unknown`.
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }

    /// A path parameter as the id it names, its percent-encoded octets decoded: URIs that differ only in an
    /// unreserved character written as `%XX` are equivalent (RFC 3986 §2.3, §6.2.2.2), so `a%7Eb` is the device
    /// `a~b` (Java's `URLEncoder` writes `~` so). Nil when the parameter is missing or its encoding is broken (`%ZZ`);
    /// a decoded id is still checked against the contract's `Identifier` by its caller.
    /// - Parameter name: The parameter's name in the route (`deviceId`).
    func pathID(_ name: String) -> String? {
        parameters.get(name).flatMap { text in
            text.utf8.contains(UInt8(ascii: "%")) ? text.removingPercentEncoding : text
        }
    }
}
