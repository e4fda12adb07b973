import Logging
import NIOConcurrencyHelpers

/// A log of the requests refused `401` or `403` by the API key check: what an operator looks for when a backend
/// still uses a revoked key or a client guesses keys.
///
/// A line names the reason, the app of the path, the presented key's public id (never its secret; absent when the
/// header held no key of the gateway's form) and the client's address. A client can make refusals as fast as it
/// can send requests, so lines are written at most once every ``interval``: the first refusal of a quiet period is
/// written at once, and the next line says how many were refused, and not written, since the last.
final class AuthenticationRefusals: Sendable {
    /// Why a request's key was refused.
    enum Reason: String, Sendable {
        case missing = "no Authorization header"
        case notBearer = "the Authorization header is not Bearer"
        case malformed = "the bearer token is not an API key of this gateway's form"
        case unknown = "no such key (revoked, or never made)"
        case rejected = "the key's secret does not match, or the key expired"
        case otherApp = "a key of another app"
    }

    /// The shortest time between two lines.
    let interval: Duration
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    private struct State {
        var lastWritten: ContinuousClock.Instant?
        var notWritten = 0
    }

    /// - Parameters:
    ///   - logger: Where the lines go (at `notice`).
    ///   - interval: The shortest time between two lines.
    init(logger: Logger, interval: Duration = .seconds(10)) {
        self.logger = logger
        self.interval = interval
    }

    /// Records one refusal, writing a line unless one was written within ``interval``.
    /// - Parameters:
    ///   - reason: Why.
    ///   - appID: The app of the path (as the request named it; only a valid identifier is written).
    ///   - keyID: The presented key's public id, if the token had the key's form.
    ///   - client: The client's address.
    func record(_ reason: Reason, appID: String, keyID: String?, client: @autoclosure () -> String) {
        let now = ContinuousClock.now
        let suppressed: Int? = state.withLockedValue { state in
            if let last = state.lastWritten, last.duration(to: now) < interval {
                state.notWritten += 1
                return nil
            }
            defer {
                state.lastWritten = now
                state.notWritten = 0
            }
            return state.notWritten
        }
        guard let suppressed else { return }
        var metadata: Logger.Metadata = [
            "reason": "\(reason.rawValue)", "client": "\(client())",
            "app": "\(Identifier.isValid(appID) ? appID : "(not an app id)")",
        ]
        if let keyID { metadata["keyId"] = "\(keyID)" }
        if suppressed > 0 { metadata["refusedSinceLastLine"] = "\(suppressed)" }
        logger.notice("API key refused", metadata: metadata)
    }
}
