import Foundation
import Logging
import NIOCore
import NIOPosix
import SealedPushCore
import SealedPushServer

/// An FCM HTTP v1 client (`Specs/fcm-v1.md`): `POST /v1/projects/{project}/messages:send` over one reused HTTP/2
/// connection, OAuth 2.0 access tokens from a service account (cached, refreshed before expiry, one refresh at a
/// time), a deadline on every request, bounded retries with exponential backoff and jitter, `Retry-After` honoured
/// on 429 and 503, and errors mapped to ``FCMFailure``.
///
/// A configuration error (`THIRD_PARTY_AUTH_ERROR`, a refused assertion, 401 twice in a row, `PERMISSION_DENIED`)
/// stops the client's sends: every later ``send(_:)`` fails at once with that failure, logged once at error level,
/// until ``resumeAfterConfigurationError()``.
public final class FCMClient: Sendable {
    /// The configuration.
    public let configuration: FCMClientConfiguration
    private let group: MultiThreadedEventLoopGroup
    private let slot: FCMConnectionSlot
    private let tokens: FCMAccessTokenProvider
    private let logger: Logger
    private let sendPath: String
    private let halted = LockedBox<FCMFailure?>(nil)

    /// Creates a client (connections are made on first use).
    /// - Parameters:
    ///   - configuration: Account, endpoint, deadlines, retries.
    ///   - logger: Where to log (never tokens, keys or message bodies).
    /// - Throws: `SealedPushError` (`invalidArgument`) for a bad token_uri or project id, or a TLS setup failure.
    public init(configuration: FCMClientConfiguration, logger: Logger = Logger(label: "sealedpush.fcm")) throws {
        let project = configuration.projectID
        guard !project.isEmpty, project.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") })
        else { throw SealedPushError(.invalidArgument, "the FCM project id \"\(project.prefix(60))\" is not valid") }
        guard configuration.threads >= 1, configuration.threads <= 16 else {
            throw SealedPushError(.invalidArgument, "threads must be 1 ... 16")
        }
        let (tokenEndpoint, tokenPath) = try FCMEndpoint.parse(
            configuration.serviceAccount.tokenURI, trustedCertificatePEM: configuration.tokenEndpointTrustedCertificatePEM)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.threads)
        do {
            self.slot = try FCMConnectionSlot(
                endpoint: configuration.endpoint, group: group, connectTimeout: configuration.connectTimeout,
                proxy: configuration.proxy)
            let tokenSlot = tokenEndpoint == configuration.endpoint
                ? slot
                : try FCMConnectionSlot(
                    endpoint: tokenEndpoint, group: group, connectTimeout: configuration.connectTimeout,
                    proxy: configuration.proxy)
            self.tokens = FCMAccessTokenProvider(
                account: configuration.serviceAccount, slot: tokenSlot, path: tokenPath,
                timeout: configuration.requestTimeout, logger: logger, now: { Date() })
        } catch {
            try? group.syncShutdownGracefully()
            throw SealedPushError(.invalidArgument, "FCM client TLS setup failed: \(error)")
        }
        self.group = group
        self.configuration = configuration
        self.logger = logger
        self.sendPath = configuration.endpoint.pathPrefix + "/v1/projects/\(project)/messages:send"
    }

    /// Sends one message, retrying as the policy allows.
    /// - Parameter message: The message (validated first: `payloadTooLarge` and `invalidArgument` refuse it unsent).
    /// - Returns: FCM's message name, or the failure, with the attempts made.
    public func send(_ message: FCMMessage) async -> FCMSendResult {
        do {
            try message.validate()
        } catch let error as SealedPushError {
            let reason: FCMFailure.Reason = error.code == .payloadTooLarge ? .payloadTooLarge : .invalidArgument
            return FCMSendResult(
                outcome: .failure(FCMFailure(reason: reason, status: nil, errorCode: error.code.name, message: error.message)),
                attempts: 0)
        } catch {
            return FCMSendResult(
                outcome: .failure(FCMFailure(reason: .invalidArgument, status: nil, errorCode: nil, message: "\(error)")),
                attempts: 0)
        }
        return await send(body: message.body())
    }

    /// Sends a prebuilt request body (byte-identical on resend), retrying as the policy allows.
    /// - Parameter body: An HTTP v1 request body (``FCMMessage/body()``).
    /// - Returns: FCM's message name, or the failure, with the attempts made.
    public func send(body: [UInt8]) async -> FCMSendResult {
        if let failure = halted.value { return FCMSendResult(outcome: .failure(failure), attempts: 0) }
        let clock = ContinuousClock()
        let deadline = clock.now + configuration.retry.maxTotal
        var attempts = 0
        var unauthorizedInARow = 0
        var transient: [FCMFailure.Reason] = []
        while true {
            attempts += 1
            let (failure, retryAfter, token) = await attempt(body: body)
            guard var failure else {
                return FCMSendResult(outcome: .success(retryAfter ?? ""), attempts: attempts, transientFailures: transient)
            }
            if failure.isRetryable || failure.reason == .unauthenticated && failure.status == 401 && token != nil {
                transient.append(failure.reason)
            }
            if failure.reason == .unauthenticated, failure.status == 401, let token {
                unauthorizedInARow += 1
                await tokens.invalidate(token)
                if unauthorizedInARow < 2, attempts < configuration.retry.maxAttempts { continue }  // refresh once
            } else {
                unauthorizedInARow = 0
            }
            if failure.isConfigurationError {
                halt(failure)
                return FCMSendResult(outcome: .failure(failure), attempts: attempts, transientFailures: transient)
            }
            guard failure.isRetryable, attempts < configuration.retry.maxAttempts else {
                return FCMSendResult(outcome: .failure(failure), attempts: attempts, transientFailures: transient)
            }
            var delay = configuration.retry.backoff(forRetry: attempts)
            if let retryAfter, let wait = RetryAfter.wait(retryAfter) { delay = wait }
            guard clock.now + delay < deadline else {
                failure = FCMFailure(
                    reason: failure.reason, status: failure.status, errorCode: failure.errorCode,
                    message: failure.message + " (gave up: the next attempt would pass the retry deadline)")
                return FCMSendResult(outcome: .failure(failure), attempts: attempts, transientFailures: transient)
            }
            try? await Task.sleep(for: delay)
            if Task.isCancelled {
                return FCMSendResult(
                    outcome: .failure(FCMFailure(reason: .timeout, status: nil, errorCode: nil, message: "cancelled")),
                    attempts: attempts, transientFailures: transient)
            }
        }
    }

    /// One attempt: (nil, name, token) on success; (failure, Retry-After, token used) otherwise.
    private func attempt(body: [UInt8]) async -> (FCMFailure?, String?, String?) {
        let token: String
        do {
            token = try await tokens.token()
        } catch let failure as FCMFailure {
            return (failure, nil, nil)
        } catch {
            return (FCMFailure(reason: .connection, status: nil, errorCode: nil, message: "\(error)"), nil, nil)
        }
        let connection: FCMHTTP2Connection
        do {
            connection = try await slot.get()
        } catch {
            return (FCMFailure(
                reason: .connection, status: nil, errorCode: nil,
                message: "cannot connect to \(configuration.endpoint.authority): \(error)"), nil, token)
        }
        let outcome = await connection.execute(
            method: "POST", path: sendPath,
            headers: [("authorization", "Bearer " + token), ("content-type", "application/json; charset=UTF-8")],
            body: body, timeout: configuration.requestTimeout)
        switch outcome {
        case .timedOut:
            return (FCMFailure(reason: .timeout, status: nil, errorCode: nil, message: "no answer within the request deadline"), nil, token)
        case .lost(let why):
            return (FCMFailure(reason: .connection, status: nil, errorCode: nil, message: why), nil, token)
        case .response(let response):
            if response.status == 200 {
                let name = (try? JSONParser.parse(response.body, maxDepth: 8, errorCode: .malformedPayload))?["name"]?.stringValue
                return (nil, name ?? "", token)
            }
            return (FCMFailure.from(status: response.status, body: response.body), response.headers["retry-after"], token)
        }
    }

    private func halt(_ failure: FCMFailure) {
        let first = halted.update { current in
            guard current == nil else { return false }
            current = failure
            return true
        }
        if first {
            logger.error(
                "FCM configuration error: sends for this app are stopped until the configuration is fixed",
                metadata: ["project": "\(configuration.projectID)", "failure": "\(failure)"])
        }
    }

    /// The configuration error that stopped this client's sends, if any.
    public var configurationError: FCMFailure? { halted.value }

    /// Lets sends through again after a configuration error was fixed (for example a new APNs key in Firebase).
    public func resumeAfterConfigurationError() { halted.update { $0 = nil } }

    /// How many access tokens were fetched so far.
    public var accessTokenFetches: Int { get async { await tokens.fetches } }

    /// How many connections to FCM were made so far.
    public var connectionsMade: Int { get async { await slot.connectionsMade } }

    /// Closes the connections and stops the threads.
    public func shutdown() async {
        await slot.close()
        try? await group.shutdownGracefully()
    }
}

/// A value behind a lock.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func update<Result>(_ body: (inout Value) -> Result) -> Result { lock.withLock { body(&stored) } }
}
