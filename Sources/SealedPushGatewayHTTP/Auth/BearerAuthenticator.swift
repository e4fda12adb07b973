import Foundation
import Hummingbird
import HTTPTypes
import SealedPushGateway

/// Per-app bearer authentication (`Authorization: Bearer <API key>`).
///
/// The stored key is found by the presented key's public id — read from the store at most once a second per key
/// (``RecentlyRead``), so a revoked key is refused within a second — and the SHA-256 digests are compared in constant
/// time on every request, as `GatewayStore.authenticatedKey(bearer:now:)` does. No key, or a key the gateway does
/// not know or that expired, is `401`; a key of another app is `403` for every path of this app, before anything of
/// this app is read, so the answer is the same whether or not the device or notification exists. Each key's last
/// use is recorded, at most once a minute (``APIKeyUses``).
struct BearerAuthenticator: Sendable {
    let calls: StoreCalls
    /// Where each key's last use is recorded (at most once a minute).
    let uses: APIKeyUses
    /// The keys read in the last second.
    let keys: RecentlyRead<StoredAPIKey>
    /// Where refusals are logged (at most one line every 10 s).
    let refusals: AuthenticationRefusals

    /// Checks that the request carries a key of `appID`.
    /// - Parameters:
    ///   - request: The request.
    ///   - appID: The app of the path.
    ///   - client: The client's address, for the log of refusals.
    /// - Throws: ``GatewayAPIError`` `unauthorized` (401) or `forbidden` (403).
    func authorize(_ request: Request, appID: String, client: @autoclosure () -> String) async throws {
        func refuse(_ reason: AuthenticationRefusals.Reason, keyID: String? = nil) -> GatewayAPIError {
            refusals.record(reason, appID: appID, keyID: keyID, client: client())
            return reason == .otherApp ? GatewayAPIError.forbidden : GatewayAPIError.unauthorized
        }
        guard let header = request.headers[.authorization] else { throw refuse(.missing) }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw refuse(.notBearer) }
        let token = String(parts[1]).trimmingSpaces()
        let now = Date()
        // As `GatewayStore.authenticatedKey(bearer:now:)`, with the stored key from the cache while it is fresh.
        guard let presented = APIKey(parsing: token) else { throw refuse(.malformed) }
        let stored = try await keys.record(id: presented.id) {
            try await calls.run("authenticate", { try await $0.apiKey(id: presented.id) })
        }
        guard let key = stored else { throw refuse(.unknown, keyID: presented.id) }
        guard key.accepts(presented, at: now) else { throw refuse(.rejected, keyID: presented.id) }
        guard key.appID == appID else { throw refuse(.otherApp, keyID: presented.id) }
        uses.record(key.id, now: now, store: calls.store, logger: calls.logger)
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
