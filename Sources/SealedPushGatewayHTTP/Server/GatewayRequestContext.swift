import Hummingbird
import NIOCore

/// The API's request context: Hummingbird's basic one plus the address of the connection's peer, which the receipt
/// endpoint limits refused receipts by (``ReceiptIntake``: the only route without an API key).
struct GatewayRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The peer of the connection (behind a reverse proxy, the proxy).
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// The peer's IP address as text (its port left out: one client, many connections), or `unknown`.
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}
