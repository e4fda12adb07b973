import Foundation
import Hummingbird
import Logging
import SealedPushGateway

/// `/healthz`, readiness: the database answers and takes writes.
///
/// Cheap by design — no write per request: the database's ping (a read, within its deadline), then what the writes
/// themselves recorded. Not ready (`503`, `Retry-After: 5`, `database` naming the problem) when:
/// - the SQLite file was deleted or replaced since it was opened (`database file deleted` / `database file
///   replaced`; the path is looked at at most once a second, and the store refuses writes from then on);
/// - the database does not answer the ping within its deadline (`unavailable`);
/// - the last write failed for want of the store (`not writable: SQLITE_IOERR`, `not writable: SQLSTATE 25006 …`
///   and the like; ``GatewayStore/writeProblem``) or the node heartbeat failed or stopped (`not writable: heartbeat failed (database)`, `not writable: no heartbeat for
///   N s`; nodes that deliver).
/// Once the graceful stop has begun it answers `503` with status `stopping` (``DrainService``).
/// Each change between ready and not ready is logged once (an error when it stops being ready, with the database
/// file's path for SQLite; a notice when it is ready again).
final class GatewayHealth: @unchecked Sendable {  // `reported` is behind `lock`
    private let store: any GatewayStore
    private let delivery: DeliveryService?
    private let deadline: Duration
    private let logger: Logger
    private let shutdown: ShutdownState
    private let lock = NSLock()
    private var reported: String?

    /// - Parameters:
    ///   - store: The gateway's store.
    ///   - delivery: This process's delivery service, if it delivers (its heartbeat's outcome counts).
    ///   - deadline: How long the ping may take.
    ///   - logger: Where changes of readiness are logged.
    ///   - shutdown: Whether the graceful stop has begun (then `503` with status `stopping`).
    init(
        store: any GatewayStore, delivery: DeliveryService?, deadline: Duration, logger: Logger,
        shutdown: ShutdownState = ShutdownState()
    ) {
        self.shutdown = shutdown
        self.store = store
        self.delivery = delivery
        self.deadline = deadline
        self.logger = logger
    }

    /// The `Health` answer: `200` when ready, else `503` naming the database's problem; `503` with status `stopping`
    /// once the graceful stop has begun (a load balancer takes the node out while it still answers).
    func response() async -> Response {
        if shutdown.isStopping {
            return (try? JSONResponse.make(
                .serviceUnavailable, HealthModel(status: "stopping", database: "ok"),
                headers: [.retryAfter: "5"])) ?? Response(status: .serviceUnavailable)
        }
        let problem = await self.problem()
        noteChange(to: problem)
        guard let problem else {
            return (try? JSONResponse.make(.ok, HealthModel(status: "ok", database: "ok"))) ?? Response(status: .ok)
        }
        return (try? JSONResponse.make(
            .serviceUnavailable, HealthModel(status: "unavailable", database: problem),
            headers: [.retryAfter: "5"])) ?? Response(status: .serviceUnavailable)
    }

    /// The `Liveness` answer of `/livez`: `200` whenever the process answers at all — while the database is down or
    /// unwritable and during a graceful stop too, since restarting the process cures none of those (a liveness probe
    /// on `/healthz` would restart every node of a fleet during a database outage). It reaches nothing outside the
    /// process; that it is answered shows the API's event loops and Swift's task pool still run.
    /// - Returns: `200` with `{"status":"ok"}`.
    static func liveness() -> Response {
        (try? JSONResponse.make(.ok, LivenessModel(status: "ok"))) ?? Response(status: .ok)
    }

    /// Why the gateway is not ready, or nil when it is.
    func problem() async -> String? {
        let sqlite = store as? SQLiteGatewayStore
        // The file first: a deleted file still answers reads (from the unlinked file).
        if let problem = sqlite?.writeProblem, problem.hasPrefix("database file") { return problem }
        let pinger = StoreCalls(store: store, deadline: deadline, logger: logger)
        do {
            try await pinger.run("ping") { try await $0.ping() }
        } catch {
            return "unavailable"
        }
        return store.writeProblem ?? delivery?.writeProblem
    }

    private func noteChange(to problem: String?) {
        let previous: String? = lock.withLock {
            defer { reported = problem }
            return reported
        }
        guard previous != problem else { return }
        if let problem {
            var metadata: Logger.Metadata = ["database": "\(problem)"]
            if let sqlite = store as? SQLiteGatewayStore { metadata["file"] = "\(sqlite.path)" }
            logger.error("not ready: /healthz answers 503", metadata: metadata)
        } else {
            logger.notice("ready again: /healthz answers 200")
        }
    }
}
