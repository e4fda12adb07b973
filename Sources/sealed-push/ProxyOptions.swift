import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushServer

/// `--proxy` and `--proxy-credentials` of `send` and `fcm-send`: reach the provider through an HTTP proxy's
/// `CONNECT` tunnel, as a gateway with `delivery.proxy` does.
struct ProxyOptions: ParsableArguments {
    @Option(name: .long, help: "An HTTP proxy to tunnel through (CONNECT): http://host:port.")
    var proxy: String?

    @Option(
        name: .customLong("proxy-credentials"),
        help: "A file (mode 0600) holding the proxy's user:password; never on the command line.")
    var proxyCredentials: String?

    /// The proxy, with its credentials read from their file.
    /// - Throws: `ValidationError` naming the option (never echoing a password).
    func providerProxy() throws -> ProviderProxy? {
        guard let proxy else {
            if proxyCredentials != nil { throw ValidationError("--proxy-credentials needs --proxy") }
            return nil
        }
        let parsed: ProviderProxy
        do { parsed = try ProviderProxy(url: proxy) } catch let error as SealedPushError {
            throw ValidationError("--proxy: \(error.message)")
        }
        guard parsed.username == nil else {
            throw ValidationError(
                "--proxy must not hold a user or password (other users can read a command line): put user:password in "
                    + "a 0600 file and pass --proxy-credentials FILE")
        }
        guard let file = proxyCredentials else { return parsed }
        var bytes: [UInt8]
        do { bytes = try KeyFile.readPrivate(path: file, limit: 4096, what: "--proxy-credentials") } catch let error
            as SealedPushError
        {
            throw ValidationError(error.message)
        }
        defer { Sodium.wipe(&bytes) }
        do {
            return try parsed.withCredentials(fromFile: bytes)
        } catch let error as SealedPushError {
            throw ValidationError("--proxy-credentials \(file): \(error.message)")
        }
    }
}
