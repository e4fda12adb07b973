import Logging
import ServiceLifecycle

/// The first step of the gateway's graceful stop: says at once that the process is stopping, turns `/healthz` to
/// `503` (`stopping`), and holds the rest of the stop for ``GatewayHTTPConfiguration/drain`` while the API still
/// takes requests, so a load balancer takes the node out before its listener closes.
///
/// It is the last service of ``GatewayServiceGroup`` — swift-service-lifecycle stops services in reverse order,
/// each after the one before it has returned — so the HTTP server closes its listener only once this returns.
struct DrainService: Service, CustomStringConvertible {
    let state: ShutdownState
    let drain: Duration
    let requestGrace: Duration
    let logger: Logger

    var description: String { "DrainService" }

    func run() async throws {
        // Until the group's graceful stop (or cancellation, which ends the process's stop anyway).
        do { try await gracefulShutdown() } catch { return }
        state.markStopping()
        logger.notice(
            "stopping: /healthz answers 503; the listener closes after the drain, then requests in flight get their grace",
            metadata: ["drainSeconds": "\(Self.seconds(drain))", "requestGraceSeconds": "\(Self.seconds(requestGrace))"])
        guard drain > .zero else { return }
        try? await Task.sleep(for: drain)
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? "\(seconds)" : String(Double(seconds) + Double(attoseconds) / 1e18)
    }
}
