import Foundation
import Logging
import SealedPushCore
import SealedPushServer

/// OAuth 2.0 access tokens for FCM from a service account (`Specs/fcm-v1.md` §5): an RS256 JWT assertion posted to
/// the account's `token_uri`, the token cached and refreshed before it expires, one refresh in flight at a time.
actor FCMAccessTokenProvider {
    private let account: FCMServiceAccount
    private let slot: FCMConnectionSlot
    private let path: String
    private let timeout: Duration
    private let logger: Logger
    private let now: @Sendable () -> Date
    private var cached: (token: String, refreshAt: Date)?
    private var refreshing: Task<(String, Int), any Error>?
    private(set) var fetches = 0

    init(
        account: FCMServiceAccount, slot: FCMConnectionSlot, path: String, timeout: Duration, logger: Logger,
        now: @escaping @Sendable () -> Date
    ) {
        self.account = account
        self.slot = slot
        self.path = path
        self.timeout = timeout
        self.logger = logger
        self.now = now
    }

    /// A valid access token: the cached one, or a fresh one (sharing a refresh already under way).
    /// - Throws: ``FCMFailure``: `unauthenticated` when the token endpoint refuses the assertion (a configuration
    ///   error), `unavailable`/`timeout`/`connection` when it cannot be reached.
    func token() async throws -> String {
        if let cached, now() < cached.refreshAt { return cached.token }
        if let refreshing { return try await refreshing.value.0 }
        let task = Task { try await self.fetch() }
        refreshing = task
        defer { refreshing = nil }
        let (token, lifetime) = try await task.value
        let margin = min(300, lifetime / 2)
        cached = (token, now().addingTimeInterval(TimeInterval(lifetime - margin)))
        return token
    }

    /// Drops the cached token if it is `token` (FCM answered 401 to it).
    func invalidate(_ token: String) {
        if cached?.token == token { cached = nil }
    }

    private func fetch() async throws -> (String, Int) {
        fetches += 1
        let assertion: String
        do {
            assertion = try account.assertion(now: Int64(now().timeIntervalSince1970))
        } catch {
            throw FCMFailure(reason: .unauthenticated, status: nil, errorCode: nil, message: "cannot sign the assertion: \(error)")
        }
        let body = Array(("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion).utf8)
        let connection: FCMHTTP2Connection
        do {
            connection = try await slot.get()
        } catch {
            throw FCMFailure(
                reason: .connection, status: nil, errorCode: nil,
                message: "cannot connect to the token endpoint \(slot.endpoint.authority): \(error)")
        }
        let outcome = await connection.execute(
            method: "POST", path: path, headers: [("content-type", "application/x-www-form-urlencoded")], body: body,
            timeout: timeout)
        switch outcome {
        case .timedOut:
            throw FCMFailure(reason: .timeout, status: nil, errorCode: nil, message: "the token endpoint did not answer in time")
        case .lost(let why):
            throw FCMFailure(reason: .connection, status: nil, errorCode: nil, message: "token endpoint: \(why)")
        case .response(let response):
            let parsed = try? JSONParser.parse(response.body, maxDepth: 8, errorCode: .malformedPayload)
            guard response.status == 200 else {
                let error = parsed?["error"]?.stringValue ?? "HTTP \(response.status)"
                let description = parsed?["error_description"]?.stringValue ?? ""
                let retryable = response.status >= 500 || response.status == 429
                logger.error(
                    "FCM token endpoint refused the assertion",
                    metadata: ["account": "\(account.clientEmail)", "error": "\(error)", "status": "\(response.status)"])
                throw FCMFailure(
                    reason: retryable ? .unavailable : .unauthenticated, status: response.status, errorCode: error,
                    message: "the token endpoint answered \(response.status) \(error): \(description.prefix(300))")
            }
            guard let token = parsed?["access_token"]?.stringValue, !token.isEmpty,
                let lifetime = parsed?["expires_in"]?.numberValue, lifetime >= 1
            else {
                throw FCMFailure(
                    reason: .unavailable, status: 200, errorCode: nil,
                    message: "the token endpoint's answer has no access_token and expires_in")
            }
            return (token, Int(min(lifetime, 86_400)))
        }
    }
}
