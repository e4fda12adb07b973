import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        var status = stat()
        guard lstat(file, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw ValidationError("--proxy-credentials \(file) must be a regular file (not a link)")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw ValidationError(
                "--proxy-credentials \(file) is readable by others (mode \(String(status.st_mode & 0o777, radix: 8))): "
                    + "chmod 600 it")
        }
        var bytes: [UInt8]
        do { bytes = try KeyFile.read(path: file, limit: 4096) } catch let error as SealedPushError {
            throw ValidationError("--proxy-credentials: \(error.message)")
        }
        defer { Sodium.wipe(&bytes) }
        do {
            return try parsed.withCredentials(fromFile: bytes)
        } catch let error as SealedPushError {
            throw ValidationError("--proxy-credentials \(file): \(error.message)")
        }
    }
}
