import Logging
import SealedPushGateway

/// Store calls with a deadline, their failures mapped to the contract's errors.
///
/// A call that does not answer within ``deadline`` is abandoned with `503 unavailable` (the store's own timeouts
/// still bound the work left behind). `GatewayStoreError` codes map to `422` (`invalidArgument`, `unknownDevice`),
/// `409` (`deviceKeyChanged`) or `503` (`database`); the logged line names the code only.
struct StoreCalls: Sendable {
    let store: any GatewayStore
    let deadline: Duration
    let logger: Logger

    /// Runs `body` against the store within the deadline.
    func run<T: Sendable>(_ what: String, _ body: @escaping @Sendable (any GatewayStore) async throws -> T) async throws -> T {
        let store = self.store
        do {
            // AbandonableCall, not a task group racing a sleep: a cancelled Task.sleep stayed allocated on this
            // platform's runtime, a few hundred bytes per request.
            return try await AbandonableCall<T>.run(
                deadline: deadline, timeoutError: { StoreCallTimedOut() }
            ) { try await body(store) }
        } catch is StoreCallTimedOut {
            logger.warning("store call timed out", metadata: ["call": "\(what)"])
            throw GatewayAPIError.unavailable
        } catch let error as GatewayAPIError {
            throw error
        } catch let error as GatewayStoreError {
            throw apiError(error, what)
        } catch is CancellationError {
            throw GatewayAPIError.unavailable
        } catch {
            logger.error("store call failed", metadata: ["call": "\(what)", "error": "\(type(of: error))"])
            throw GatewayAPIError.unavailable
        }
    }

    /// The contract's error for a store's: `422` for `unknownDevice` and `invalidArgument`, `409` for
    /// `deviceKeyChanged`, else `503` (logged by its code only).
    func apiError(_ error: GatewayStoreError, _ what: String) -> GatewayAPIError {
        switch error.code {
        case .unknownDevice:
            return GatewayAPIError(.unprocessableContent, "unknownDevice", error.message, field: error.field)
        case .invalidArgument:
            return GatewayAPIError.invalid(error.message, field: error.field)
        case .deviceKeyChanged:
            // A device registered again meanwhile: a conflict the caller resolves by sending again, never a
            // `503` (the database answered).
            return GatewayAPIError(.conflict, "deviceKeyChanged", error.message, field: error.field)
        default:
            logger.error("store call failed", metadata: ["call": "\(what)", "code": "\(error.code)"])
            return GatewayAPIError.unavailable
        }
    }
}

/// A store call passed its deadline.
private struct StoreCallTimedOut: Error {}
