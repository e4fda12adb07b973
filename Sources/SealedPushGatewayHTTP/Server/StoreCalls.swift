import Logging
import SealedPushGateway

/// Store calls with a deadline, their failures mapped to the contract's errors.
///
/// A call that does not answer within ``deadline`` is abandoned with `503 unavailable` (the store's own timeouts
/// still bound the work left behind). `GatewayStoreError` codes map to `422` (`invalidArgument`, `unknownDevice`)
/// or `503` (`database`); the logged line names the code only.
struct StoreCalls: Sendable {
    let store: any GatewayStore
    let deadline: Duration
    let logger: Logger

    /// Runs `body` against the store within the deadline.
    func run<T: Sendable>(_ what: String, _ body: @escaping @Sendable (any GatewayStore) async throws -> T) async throws -> T {
        let store = self.store
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask { try await body(store) }
                group.addTask {
                    try await Task.sleep(for: deadline)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let value = first else {
                    logger.warning("store call timed out", metadata: ["call": "\(what)"])
                    throw GatewayAPIError.unavailable
                }
                return value
            }
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

    /// The contract's error for a store's: `422` for `unknownDevice` and `invalidArgument`, else `503` (logged by
    /// its code only).
    func apiError(_ error: GatewayStoreError, _ what: String) -> GatewayAPIError {
        switch error.code {
        case .unknownDevice:
            return GatewayAPIError(.unprocessableContent, "unknownDevice", error.message, field: error.field)
        case .invalidArgument:
            return GatewayAPIError.invalid(error.message, field: error.field)
        default:
            logger.error("store call failed", metadata: ["call": "\(what)", "code": "\(error.code)"])
            return GatewayAPIError.unavailable
        }
    }
}
