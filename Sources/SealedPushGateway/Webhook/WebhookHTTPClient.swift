import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SealedPushCore

/// One webhook attempt: a `POST` over HTTP/1.1 (TLS for `https`, trusting the system's roots or the webhook's own
/// ``UnregisteredWebhookConfiguration/trustRootsPEM``), one connection per attempt, closed after the answer
/// (``OneShotHTTP1Exchange``: one deadline for the whole attempt, connecting included).
///
/// It never follows a redirect (the status is returned as it is), reads no proxy from the environment and sends the
/// URL's user and password nowhere (a receiver wanting them is given the `Authorization` header by the caller). Its
/// errors name the redacted URL only.
struct WebhookHTTPClient: Sendable {
    private let url: URL
    private let redactedURL: String
    private let sslContext: NIOSSLContext?
    private let group: any EventLoopGroup

    /// A client for `configuration`'s URL.
    /// - Parameter configuration: The webhook's configuration.
    /// - Throws: `SealedPushError` `invalidArgument` when the trust roots hold no usable certificate.
    init(configuration: UnregisteredWebhookConfiguration) throws {
        url = configuration.url
        redactedURL = configuration.redactedURL
        group = MultiThreadedEventLoopGroup.singleton
        if configuration.url.scheme?.lowercased() == "https" {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let pem = configuration.trustRootsPEM {
                tls.trustRoots = .certificates(try UnregisteredWebhookConfiguration.certificates(inPEM: pem))
            }
            do { sslContext = try NIOSSLContext(configuration: tls) } catch {
                throw SealedPushError(.invalidArgument, "the webhook's TLS configuration is unusable: \(error)")
            }
        } else {
            sslContext = nil
        }
    }

    /// Posts `body` with `headers` (besides `Host`, `Content-Length`, `Connection` and `Authorization` from the
    /// URL's user info, which it adds).
    /// - Parameters:
    ///   - headers: The event's headers.
    ///   - body: The body.
    ///   - timeout: The most time the attempt may take, connecting included.
    /// - Returns: The answer's status (a 1xx interim answer skipped) and the wait its `Retry-After` asks for.
    /// - Throws: ``WebhookAttemptError`` (connection, TLS, timeout), naming the redacted URL only.
    func post(headers extra: [(String, String)], body: [UInt8], timeout: Duration) async throws -> WebhookAnswer {
        let scheme = url.scheme?.lowercased() ?? "http"
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let host = components?.host ?? url.host ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let hostHeader = (bareHost.contains(":") ? "[\(bareHost)]" : bareHost) + (url.port.map { ":\($0)" } ?? "")
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: hostHeader)
        headers.add(name: "User-Agent", value: SealedPushVersion.userAgent("sealed-push-gateway"))
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        if let user = components?.percentEncodedUser {
            let decodedUser = user.removingPercentEncoding ?? user
            let password = components?.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 } ?? ""
            headers.add(name: "Authorization", value: "Basic " + Data("\(decodedUser):\(password)".utf8).base64EncodedString())
        }
        for (name, value) in extra { headers.add(name: name, value: value) }

        var buffer = ByteBuffer()
        buffer.writeBytes(body)
        let request: [HTTPClientRequestPart] = [
            .head(HTTPRequestHead(version: .http1_1, method: .POST, uri: target, headers: headers)),
            .body(.byteBuffer(buffer)), .end(nil),
        ]
        let redactedURL = self.redactedURL
        do {
            return try await OneShotHTTP1Exchange.run(
                to: .host(bareHost, port: port), tls: sslContext, serverName: bareHost, timeout: timeout, group: group,
                request: request
            ) { inbound in
                for try await part in inbound {
                    if case .head(let head) = part, head.status.code >= 200 {
                        return WebhookAnswer(status: Int(head.status.code), retryAfter: head.headers["Retry-After"].first)
                    }
                }
                throw WebhookAttemptError("\(redactedURL) closed the connection without answering")
            }
        } catch let error as WebhookAttemptError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch OneShotHTTP1Exchange.Failure.connect(let error) {
            throw WebhookAttemptError("cannot connect to \(redactedURL) (\(Self.describe(error)))")
        } catch OneShotHTTP1Exchange.Failure.timedOut {
            throw WebhookAttemptError("no answer from \(redactedURL) within \(timeout)")
        } catch {
            throw WebhookAttemptError("the connection to \(redactedURL) failed (\(Self.describe(error)))")
        }
    }

    /// An error's text without any URL it may carry (NIO's errors name addresses, not URLs; kept short).
    private static func describe(_ error: any Error) -> String {
        String("\(error)".prefix(200))
    }
}

/// A webhook attempt that failed before an answer (connection, TLS, timeout); its text names the redacted URL only.
struct WebhookAttemptError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension UnregisteredWebhookConfiguration {
    /// The certificates of a PEM text (the webhook's trust roots).
    /// - Parameter pem: PEM text.
    /// - Returns: Its certificates (at least one).
    /// - Throws: `SealedPushError` `invalidArgument` when it holds no PEM certificate or an unreadable one.
    static func certificates(inPEM pem: String) throws -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do { certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)) } catch {
            throw SealedPushError(.invalidArgument, "holds no PEM certificate that can be read")
        }
        guard !certificates.isEmpty else {
            throw SealedPushError(.invalidArgument, "holds no PEM certificate that can be read")
        }
        return certificates
    }

    /// Checks that a PEM text holds at least one readable certificate (for a configuration check at start).
    /// - Parameter pem: PEM text.
    /// - Returns: How many certificates it holds.
    /// - Throws: `SealedPushError` `invalidArgument` saying what is wrong ("holds no PEM certificate").
    public static func checkTrustRoots(pem: String) throws -> Int {
        try certificates(inPEM: pem).count
    }
}
