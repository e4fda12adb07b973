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

    /// `--proxy-credentials` without `--proxy` is a usage error.
    func validate() throws {
        if proxy == nil, proxyCredentials != nil { throw ValidationError("--proxy-credentials needs --proxy") }
    }

    /// The proxy, with its credentials read from their file.
    ///
    /// Called by `run()`: its errors are the command's errors (`error: <code>: <message>`, exit status 1, as a bad
    /// `--endpoint`'s), not usage errors.
    /// - Throws: `SealedPushError` naming the option (never echoing a password): `invalidArgument` for a proxy URL
    ///   the client cannot use, `io` for a credentials file it cannot read.
    func providerProxy() throws -> ProviderProxy? {
        guard let proxy else { return nil }
        let parsed: ProviderProxy
        do { parsed = try ProviderProxy(url: proxy) } catch let error as SealedPushError {
            throw SealedPushError(error.code, "--proxy: \(error.message)")
        }
        guard parsed.username == nil else {
            throw SealedPushError(
                .invalidArgument,
                "--proxy must not hold a user or password (other users can read a command line): put user:password in "
                    + "a 0600 file and pass --proxy-credentials FILE")
        }
        guard let file = proxyCredentials else { return parsed }
        var bytes = try KeyFile.readPrivate(path: file, limit: 4096, what: "--proxy-credentials")
        defer { Sodium.wipe(&bytes) }
        do {
            return try parsed.withCredentials(fromFile: bytes)
        } catch let error as SealedPushError {
            throw SealedPushError(error.code, "--proxy-credentials \(file): \(error.message)")
        }
    }
}
