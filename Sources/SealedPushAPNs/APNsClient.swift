import Foundation
import Logging
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL
import SealedPushCore
import SealedPushServer

/// An HTTP/2 APNs provider client with token authentication.
///
/// - One provider token (ES256, signed with OpenSSL) is shared by all connections and renewed at
///   ``APNsClientConfiguration/tokenRenewalAge`` (never within 20 minutes, never older than 60).
/// - Every request has a deadline; connections are re-established after GOAWAY or idle close; requests cut off
///   by GOAWAY above its last-stream-id (or refused) were never processed and are resent on a new connection with
///   the same `apns-id` without using up the retry budget (the deadline bounds them); 429/500/503 and transport
///   failures are retried with exponential backoff and jitter, a bounded number of times; 400/403/404/405/410/413
///   never are.
/// - Every notification ends in exactly one ``APNsResult``. Tokens APNs reports as unregistered (410) are also
///   published on ``unregisteredTokens`` for pruning.
/// - Logs carry `apns-id`, a redacted device token, status and reason: never the payload or the JWT.
public final class APNsClient: Sendable {
    /// The configuration.
    public let configuration: APNsClientConfiguration
    /// Device tokens APNs answered 410 `Unregistered` for, with the timestamp, in order. Buffers the newest
    /// 100,000 if nobody reads; finishes at ``shutdown()``.
    public let unregisteredTokens: AsyncStream<APNsUnregisteredToken>

    private let unregisteredContinuation: AsyncStream<APNsUnregisteredToken>.Continuation
    private let tokens: ProviderTokenCache
    private let pool: APNsConnectionPool
    private let logger: Logger
    private let counters = APNsClientStatistics()

    /// Creates a client. Nothing connects until the first send.
    /// - Parameters:
    ///   - configuration: Endpoint, trust, limits, retries.
    ///   - tokenIssuer: Signs provider tokens (from the `.p8` key, key id and team id).
    ///   - logger: Where to log.
    /// - Throws: `SealedPushError` for an invalid configuration or unreadable trust roots;
    ///   `SealedPushError` for a renewal age outside [20, 60) minutes.
    public init(
        configuration: APNsClientConfiguration, tokenIssuer: ProviderTokenIssuer,
        logger: Logger = Logger(label: "sealedpush.apns")
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.tokens = try ProviderTokenCache(
            issuer: tokenIssuer, renewalAge: configuration.tokenRenewalAge, clock: configuration.clock)
        self.logger = logger

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        switch configuration.trustRoots {
        case .system:
            break
        case .pemFile(let path):
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw SealedPushError(.io, "cannot read the CA file \(path)")
            }
            tls.trustRoots = .file(path)
        case .pem(let text):
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(text.utf8)))
            } catch {
                throw SealedPushError(.invalidArgument, "the trusted certificates are not valid PEM: \(error)")
            }
        }
        let sslContext: NIOSSLContext
        do { sslContext = try NIOSSLContext(configuration: tls) } catch {
            throw SealedPushError(.invalidArgument, "cannot set up TLS: \(error)")
        }
        self.pool = APNsConnectionPool(
            endpoint: configuration.endpoint, sslContext: sslContext, group: MultiThreadedEventLoopGroup.singleton,
            maxConnections: configuration.maxConnections,
            streamCap: configuration.maxConcurrentStreamsPerConnection,
            connectTimeout: configuration.connectTimeout, proxy: configuration.proxy, logger: logger,
            statistics: counters)
        (self.unregisteredTokens, self.unregisteredContinuation) = AsyncStream.makeStream(
            of: APNsUnregisteredToken.self, bufferingPolicy: .bufferingNewest(100_000))
    }

    /// Counters since creation.
    public var statistics: APNsClientCounters { counters.snapshot }

    /// Closes all connections and finishes ``unregisteredTokens``. Sends still running end with
    /// `ClientShutdown` (or their current attempt's outcome).
    public func shutdown() async {
        await pool.shutdown()
        unregisteredContinuation.finish()
    }

    /// Sends one notification and waits for its single result.
    /// - Parameter notification: The notification.
    /// - Returns: The report: delivered or failed, attempts, possible duplicate.
    public func send(_ notification: APNsNotification) async -> APNsSendReport {
        // Requests made (reported), and those that count against `retry.maxAttempts`: every one but the resends of
        // requests the server certainly never processed.
        var attempts = 0
        var budgetUsed = 0
        var possibleDuplicate = false
        var transientFailures: [String] = []
        func report(_ result: APNsResult) -> APNsSendReport {
            APNsSendReport(
                apnsID: notification.apnsID, deviceToken: notification.deviceToken, result: result,
                attempts: attempts, possibleDuplicate: possibleDuplicate, transientFailures: transientFailures)
        }
        func fail(_ reason: APNsReason, status: Int? = nil, timestamp: Date? = nil, _ message: String) -> APNsSendReport
        {
            let failure = APNsFailure(reason: reason, status: status, timestamp: timestamp, message: message)
            logger.notice(
                "APNs notification failed",
                metadata: [
                    "apns-id": "\(notification.apnsID)", "device": "\(notification.deviceToken.redacted)",
                    "status": "\(status.map(String.init) ?? "-")", "reason": "\(reason)", "attempts": "\(attempts)",
                ])
            return report(.failed(failure))
        }

        if let failure = notification.validationFailure() { return report(.failed(failure)) }

        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: configuration.deadline)
        var retryNumber = 0
        var lastRetryable: (reason: APNsReason, status: Int?, message: String)?

        while true {
            if budgetUsed >= configuration.retry.maxAttempts {
                let last = lastRetryable ?? (.transportFailure, nil, "no attempt left")
                return fail(last.reason, status: last.status, "gave up after \(attempts) attempts: \(last.message)")
            }
            let token: ProviderToken
            do {
                let before = counters.snapshot.tokensIssued
                token = try tokens.token()
                if token.generation > before { counters.increment(\.tokensIssued, by: token.generation - before) }
            } catch {
                return fail(.providerTokenFailure, "cannot sign the provider token: \(error)")
            }

            let lease: APNsConnectionPool.Lease
            do {
                lease = try await pool.acquire(deadline: deadline)
            } catch APNsConnectionPool.AcquireError.deadlineExceeded {
                counters.increment(\.timeouts)
                if let last = lastRetryable {
                    return fail(last.reason, status: last.status, "deadline reached while retrying: \(last.message)")
                }
                return fail(.timeout, "no connection slot before the deadline")
            } catch APNsConnectionPool.AcquireError.connectFailed(let message) {
                attempts += 1
                budgetUsed += 1
                transientFailures.append("ConnectFailed")
                lastRetryable = (.transportFailure, nil, "connect failed: \(message)")
                retryNumber += 1
                if await backoff(retry: retryNumber, deadline: deadline, clock: clock) { continue }
                return fail(.transportFailure, "connect failed: \(message)")
            } catch {
                return fail(.clientShutdown, "the client was shut down")
            }

            attempts += 1
            budgetUsed += 1
            counters.increment(\.requestsSent)
            let remaining = clock.now.duration(to: deadline)
            let timeout = min(configuration.requestTimeout, max(remaining, .milliseconds(1)))
            let outcome = await lease.connection.execute(makeRequest(notification, token: token), timeout: timeout)
            var tokenAccepted = false
            var connectionSuspect = false
            switch outcome {
            case .response(let response): tokenAccepted = response.status != 403
            case .notProcessed, .lost: connectionSuspect = true
            case .timedOut(let silentConnection):
                // Nothing arrived on the connection while it waited: retire it (the next request gets a new one).
                connectionSuspect = silentConnection
                if silentConnection { counters.increment(\.silentConnectionsRetired) }
            }
            await pool.release(lease, tokenAccepted: tokenAccepted, retire: connectionSuspect)

            switch outcome {
            case .response(let response):
                if response.status == 200 {
                    logger.debug(
                        "APNs delivered",
                        metadata: [
                            "apns-id": "\(notification.apnsID)", "device": "\(notification.deviceToken.redacted)",
                            "attempts": "\(attempts)",
                        ])
                    return report(.delivered(apnsID: notification.apnsID))
                }
                let (reason, timestamp) = Self.parseErrorBody(response.body, status: response.status)
                if response.status == 403, reason == .expiredProviderToken { tokens.invalidate(token) }
                if response.status == 410 {
                    unregisteredContinuation.yield(
                        APNsUnregisteredToken(
                            deviceToken: notification.deviceToken, timestamp: timestamp, apnsID: notification.apnsID))
                }
                if [429, 500, 503].contains(response.status) {
                    transientFailures.append(reason.rawValue)
                    lastRetryable = (reason, response.status, "APNs answered \(response.status) \(reason)")
                    retryNumber += 1
                    if await backoff(retry: retryNumber, deadline: deadline, clock: clock) { continue }
                    return fail(reason, status: response.status, "retries exhausted")
                }
                return fail(reason, status: response.status, timestamp: timestamp, "APNs rejected the notification")
            case .timedOut:
                counters.increment(\.timeouts)
                transientFailures.append("Timeout")
                return fail(.timeout, "no answer within \(timeout); it may or may not have been delivered")
            case .notProcessed(let message):
                // Never processed (above a GOAWAY's last-stream-id, refused, or never sent): resending it cannot
                // deliver twice, so it is free; only the deadline bounds it.
                budgetUsed -= 1
                counters.increment(\.resends)
                transientFailures.append("NotProcessed")
                lastRetryable = (.transportFailure, nil, message)
                logger.debug(
                    "APNs resend (not processed)",
                    metadata: ["apns-id": "\(notification.apnsID)", "why": "\(message)"])
                if clock.now < deadline { continue }
                return fail(.timeout, "deadline reached while resending: \(message)")
            case .lost(let message):
                possibleDuplicate = true
                transientFailures.append("ConnectionLost")
                lastRetryable = (.transportFailure, nil, message)
                retryNumber += 1
                logger.debug(
                    "APNs resend (connection lost)",
                    metadata: ["apns-id": "\(notification.apnsID)", "why": "\(message)"])
                if await backoff(retry: retryNumber, deadline: deadline, clock: clock, short: true) { continue }
                return fail(.transportFailure, message)
            }
        }
    }

    /// Sleeps before a retry unless that would pass the deadline. Returns false when no retry should be made.
    private func backoff(
        retry: Int, deadline: ContinuousClock.Instant, clock: ContinuousClock, short: Bool = false
    ) async -> Bool {
        counters.increment(\.retries)
        var delay = configuration.retry.backoff(forRetry: retry)
        if short { delay = delay / 4 }
        guard clock.now.advanced(by: delay) < deadline else { return false }
        do { try await Task.sleep(for: delay) } catch { return false }
        return true
    }

    private func makeRequest(_ notification: APNsNotification, token: ProviderToken) -> APNsWireRequest {
        var headers = HPACKHeaders()
        headers.reserveCapacity(12)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        // Values unique to one request are not indexed: they would only churn the HPACK dynamic table, which then
        // holds the shared ones (authorization, topic) that really repeat.
        headers.add(name: ":path", value: "/3/device/" + notification.deviceToken.hex, indexing: .nonIndexable)
        headers.add(name: ":authority", value: configuration.endpoint.host)
        headers.add(name: "authorization", value: token.authorizationHeader)
        headers.add(name: "apns-push-type", value: notification.pushType.rawValue)
        headers.add(name: "apns-topic", value: notification.topic)
        headers.add(name: "apns-id", value: notification.apnsID.uuidString, indexing: .nonIndexable)
        headers.add(name: "apns-priority", value: String(notification.priority.rawValue))
        if let expiration = notification.expiration {
            headers.add(
                name: "apns-expiration", value: String(Int64(expiration.timeIntervalSince1970)), indexing: .nonIndexable
            )
        }
        if let collapseID = notification.collapseID { headers.add(name: "apns-collapse-id", value: collapseID) }
        headers.add(name: "content-type", value: "application/json")
        return APNsWireRequest(headers: headers, body: notification.payload)
    }

    /// Reads `{"reason":…, "timestamp":…}`; an unreadable body gives `BadResponse`.
    static func parseErrorBody(_ body: [UInt8], status: Int) -> (APNsReason, Date?) {
        guard !body.isEmpty, let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let reason = object["reason"] as? String, !reason.isEmpty, reason.utf8.count <= 128
        else { return (.badResponse, nil) }
        var timestamp: Date?
        if let milliseconds = (object["timestamp"] as? NSNumber)?.doubleValue, milliseconds.isFinite,
            milliseconds >= 0
        {
            timestamp = Date(timeIntervalSince1970: milliseconds / 1000)
        }
        return (APNsReason(rawValue: reason), timestamp)
    }
}
