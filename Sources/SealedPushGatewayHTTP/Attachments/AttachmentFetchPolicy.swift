import Foundation
import NIOSSL

/// How the gateway fetches attachments from URLs a backend gives in a send request.
///
/// A fetch is one HTTP/1.1 `GET`, no redirects followed, ended at its deadline or as soon as more bytes arrive than
/// the attachment's media kind allows (`Content-Length` is not trusted). The fetched plaintext is held in memory
/// only, encrypted at once into the blob store and zeroed. Errors name the host, never the URL's path.
public struct AttachmentFetchPolicy: Sendable {
    /// The most time one fetch may take, connecting included (default 20 s).
    public var timeout: Duration
    /// Whether `http://` URLs are fetched (default false: `https` only).
    public var allowHTTP: Bool
    /// Hosts (lowercase) the gateway may fetch from; nil for any.
    public var allowedHosts: Set<String>?
    /// Whether a host may resolve to a loopback, private (RFC 1918, unique local), link-local (cloud metadata
    /// services among them), CGNAT, multicast or unspecified address (default false: a backend's URL cannot make the
    /// gateway reach into its own network). The address checked is the address connected to.
    public var allowPrivateAddresses: Bool
    /// The most attachment bytes being fetched at once across all requests (default 64 MiB); a fetch that would
    /// pass it is refused with 503 and `Retry-After`.
    public var maxBytesInFlight: Int
    /// TLS for `https` URLs (default: the system's roots).
    public var tls: TLSConfiguration

    /// Creates a policy with the defaults.
    public init() {
        timeout = .seconds(20)
        allowHTTP = false
        allowedHosts = nil
        allowPrivateAddresses = false
        maxBytesInFlight = 64 << 20
        tls = .makeClientConfiguration()
    }
}
