import Foundation
import Logging
import Metrics
import SealedPushAPNs
import SealedPushCore
import ServiceLifecycle

/// The gateway's delivery workers on one node: claims due jobs from the ``GatewayStore`` with a lease, sends each
/// through the ``PushProvider`` of its device's platform (APNs or FCM) with its app's credentials, and ends each job
/// with its outcome; the rules below are the same for every platform. Run it in a `ServiceGroup` (it is a
/// swift-service-lifecycle `Service`).
///
/// ```swift
/// var delivery = DeliveryConfiguration(nodeID: "gw-1")   // unique per node sharing the database
/// delivery.client.maxConnections = 4
/// delivery.webhook = try UnregisteredWebhookConfiguration(url: hookURL, secret: hookSecret)
/// let service = try DeliveryService(store: store, configuration: delivery, logger: logger)
/// let group = ServiceGroup(services: [httpServer, service], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// - **Node instance**: ``start()`` (or ``run()``) records this process as its node id's running incarnation
///   (``NodeInstance``: the node id and a random boot id) and refuses to start, with ``GatewayStoreError``
///   `nodeInUse` naming the other process, while another live process holds the node id. It takes back at once
///   the leases a previous incarnation of the node id held (a restart after `kill -9` does not wait them out).
///   The running node refreshes a heartbeat every ``DeliveryConfiguration/nodeHeartbeatInterval`` and stops
///   claiming if another process took its node id over; a graceful stop deletes the record.
/// - **Claims**: as many jobs as there are free send slots (``DeliveryConfiguration/maxConcurrentSends``), owned by
///   this instance (``NodeInstance/leaseOwner``, `nodeID/bootID`) for ``DeliveryConfiguration/leaseDuration``;
///   each is sent at once. A node that dies leaves its leases to its own restart, or to their expiry, after which
///   another node's next claim takes those jobs over.
/// - **Hand-over**: a send accepted by the HTTP API of the same process goes to this service directly when it can
///   start at once (``reserve(jobs:)``: the queue drained, free slots): its jobs are enqueued `claimed` under this
///   instance's lease and handed over (``deliver(_:reserved:)``), so they cost no claim. Otherwise they are queued
///   (``jobsQueued()``) and claimed as above; a handed-over job the process never sent is an ordinary lease.
/// - **Attempts**: every provider request (the client's own retries included) is counted on the job (its status'
///   `attempts`) and in `sealedpush_gateway_provider_requests_total{platform}`; every transient failure's reason
///   goes to the job's last transient reason and to `sealedpush_gateway_retries_total{platform,reason}`
///   (``DeliveryMetrics``: every delivery metric is labelled by platform).
/// - **Clients**: APNs, one per app and environment, built on first use from the app's `.p8` key, key id and team;
///   FCM, one per app, from its service-account file and project (``FCMProvider``).
/// - **Outcomes**: sent with the provider's id (`apns-id`, FCM message name); `Unregistered`/`BadDeviceToken`/
///   `DeviceTokenNotForTopic` (APNs) or `unregistered`/`senderIdMismatch`/`invalidToken` (FCM) end the job
///   `unregistered`, mark the device (no more sends to it) and tell the webhook; transient failures (429, 500, 503,
///   transport, timeouts, after the client's own retries) come back after a backoff, at most
///   ``DeliveryConfiguration/jobRetry`` `maxAttempts` claims in all; other refusals fail with the provider's
///   reason; jobs past their ttl end `expired` unsent; a job whose device moved to the other platform since it was
///   sealed fails `PlatformChanged` (its envelope is bound to the other platform's topic).
/// - **Resends are exact copies**: the same sealed body bytes, the same `apns-collapse-id` (the notification's, or
///   one derived from its id) and the same `apns-id` (``DeliveryIdentifiers``), so APNs collapses a duplicate.
/// - **Graceful shutdown**: stops claiming, lets sends in flight finish within
///   ``DeliveryConfiguration/shutdownGracePeriod``, then abandons the rest to lease expiry, shuts the APNs clients
///   down and gives the webhook ``UnregisteredWebhookConfiguration/drainDeadline`` for its queue. Cancellation
///   does the same.
/// - **Retention**: at each expiry sweep, notifications expired longer than ``DeliveryConfiguration/retention`` ago
///   are deleted with their jobs, in batches.
public final class DeliveryService: Service, Sendable {
    /// The configuration.
    public let configuration: DeliveryConfiguration

    private let store: any GatewayStore
    /// Job ends, written in groups (one SQLite transaction for the sends that finished together) (``GatewayStore/finish(_:)``): whether the owner still held each job.
    private let finishes: GroupCommit<JobFinish, Bool>
    /// Wakes the claim loop (a send ended, jobs were queued, stop).
    private let signal = DeliverySignal()
    private let apps: AppDirectory
    private let providers: [PushPlatform: any PushProvider]
    /// The webhook (when configured): delivery posts unregistered devices to it, the HTTP API receipts.
    public let webhook: UnregisteredWebhook?
    private let metrics: DeliveryMetrics
    private let logger: Logger
    private let startState = StartState()
    /// Jobs handed over at enqueue (``deliver(_:reserved:)``), sent by the claim loop's task group; finished when the
    /// loop stops claiming. Bounded by the reserved slots.
    private let handOver: AsyncStream<[ClaimedJob]>.Continuation
    private let handedOver: AsyncStream<[ClaimedJob]>
    /// The most jobs of one notification handed over, and the slots kept free for claims: a claim batch.
    private var handOverLimit: Int { max(1, min(configuration.maxConcurrentSends / 4, 16)) }

    /// This process's incarnation of the node: its lease owner is `nodeID/bootID`.
    public let instance: NodeInstance
    /// `instance.leaseOwner`, built once (every job's end names it).
    private let leaseOwner: String
    /// The node heartbeat's last outcome (``writeProblem``).
    public let heartbeatHealth = StoreWriteHealth(failureWindow: .seconds(3_600))

    /// Creates the service; nothing runs until ``run()``.
    /// - Parameters:
    ///   - store: The gateway's store (migrated).
    ///   - configuration: Node id, endpoints, limits.
    ///   - logger: Where to log (ids, reasons and redacted tokens; never bodies or keys).
    ///   - metricsFactory: Where metrics go (default: the process's bootstrapped `MetricsSystem`).
    /// - Throws: `SealedPushError` `invalidArgument` for a configuration outside its limits.
    public init(
        store: any GatewayStore, configuration: DeliveryConfiguration,
        logger: Logger = Logger(label: "sealedpush.gateway.delivery"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) throws {
        try configuration.validate()
        var logger = logger
        logger[metadataKey: "node"] = "\(configuration.nodeID)"
        let instance = NodeInstance.current(nodeID: configuration.nodeID, now: configuration.now())
        logger[metadataKey: "boot"] = "\(instance.bootID)"
        self.instance = instance
        self.leaseOwner = instance.leaseOwner
        self.configuration = configuration
        self.store = store
        self.finishes = GroupCommit(
            maxBatch: configuration.maxConcurrentSends,
            metrics: GroupCommitMetrics(write: "finish", factory: metricsFactory)
        ) { ends in
            let held = try await store.finish(ends)
            return ends.indices.map { $0 < held.count ? held[$0] : false }
        }
        self.logger = logger
        self.apps = AppDirectory(store: store, refreshInterval: configuration.appRefreshInterval)
        let apns = APNsProvider(clients: APNsClientRegistry(configuration: configuration, logger: logger), logger: logger)
        let fcm = FCMProvider(
            clients: FCMClientRegistry(configuration: configuration, logger: logger), logger: logger,
            now: configuration.now)
        self.providers = [.apns: apns, .fcm: fcm]
        let outbox = WebhookOutbox(store: store, owner: instance.leaseOwner)
        self.webhook = try configuration.webhook.map {
            try UnregisteredWebhook(configuration: $0, logger: logger, outbox: outbox)
        }
        self.metrics = DeliveryMetrics(factory: metricsFactory)
        (self.handedOver, self.handOver) = AsyncStream.makeStream(of: [ClaimedJob].self)
    }

    /// Why this node's store writes are failing, judged by its heartbeat (no write of its own): the last heartbeat
    /// failed, or the last one that worked is older than ``DeliveryConfiguration/nodeStaleAfter`` (other nodes may
    /// then count this one as dead). Nil before ``start()`` and while heartbeats work.
    public var writeProblem: String? {
        guard startState.isStarted else { return nil }
        if let failure = heartbeatHealth.problem { return "not writable: \(failure)" }
        if let last = heartbeatHealth.lastSuccess ?? startState.startedAt,
            last.duration(to: .now) > configuration.nodeStaleAfter
        {
            return "not writable: no heartbeat for \(last.duration(to: .now).components.seconds) s"
        }
        return nil
    }

    /// Jobs were queued (by the HTTP API in this process): claim now rather than at the next poll. Cheap, callable
    /// from any thread, before or during ``run()``; other nodes find the jobs at their next poll.
    public func jobsQueued() { signal.jobsQueued() }

    /// Reserves send slots for a notification's `count` jobs about to be enqueued in this process, when they can be
    /// sent at once: the service runs, its last claim found the queue drained (and nothing was queued since it
    /// ended: newer jobs do not pass queued ones; those queued while it ran are claimed next, at once), and the slots
    /// leave room for a claim batch. Enqueue the jobs under the lease
    /// returned (``NewNotification/lease``) and pass what the store claimed for them to ``deliver(_:reserved:)`` —
    /// which must follow every reservation, with no jobs if the enqueue failed. This saves each job a claim: one
    /// store transaction (a claim on PostgreSQL is planned each time) and a wake-up of the loop.
    ///
    /// A job enqueued under the lease but never handed over (the enqueue outlived its caller's deadline, or the
    /// process died) is an ordinary claimed job: sent after its lease ends, or at once by the node's next start.
    /// - Parameter count: The notification's jobs.
    /// - Returns: The lease to enqueue them under (this instance's, for ``DeliveryConfiguration/leaseDuration``), or
    ///   nil: enqueue them queued and call ``jobsQueued()``.
    public func reserve(jobs count: Int) -> JobLease? {
        guard count > 0, count <= handOverLimit, startState.isStarted else { return nil }
        guard signal.reserve(count, limit: configuration.maxConcurrentSends - handOverLimit) else { return nil }
        return JobLease(
            owner: leaseOwner,
            expiresAt: configuration.now().addingTimeInterval(Self.seconds(configuration.leaseDuration)))
    }

    /// Sends jobs enqueued under a lease from ``reserve(jobs:)`` now, and gives back the reserved slots they do not
    /// use (jobs of unregistered devices, a replayed or refused notification). Jobs handed over after the service
    /// stopped stay claimed in the store for the node's next start (or their lease's end).
    /// - Parameters:
    ///   - jobs: ``EnqueueResult/claimed`` of the enqueue (empty if it failed).
    ///   - reserved: The `count` passed to ``reserve(jobs:)``.
    public func deliver(_ jobs: [ClaimedJob], reserved: Int) {
        let handed = min(jobs.count, reserved)
        signal.release(reserved - handed, reserved: true)
        guard handed > 0 else { return }
        signal.handedOver(handed)
        if case .terminated = handOver.yield(Array(jobs.prefix(handed))) { signal.release(handed, reserved: false) }
    }

    /// Takes the node id for this process (see ``NodeInstance``), once; ``run()`` calls it if nobody did. Call it
    /// before serving anything, so a misconfigured second process fails before it listens.
    ///
    /// Refuses while another process holds the node id and is alive or may be: its heartbeat is younger than
    /// ``DeliveryConfiguration/nodeStaleAfter`` and it is not provably gone (``NodeInstance/isProvablyGone``).
    /// Otherwise records this instance and makes every job a previous incarnation of the node id leased claimable
    /// at once.
    /// - Throws: ``GatewayStoreError`` `nodeInUse` naming the other process and when it would count as dead; the
    ///   store's errors.
    public func start() async throws {
        guard !startState.isStarted else { return }
        for _ in 0..<3 {
            let now = configuration.now()
            let recorded = try await store.node(id: configuration.nodeID)
            if let recorded, recorded.bootID != instance.bootID {
                let age = now.timeIntervalSince(recorded.heartbeatAt)
                let staleAfter = Self.seconds(configuration.nodeStaleAfter)
                if age < staleAfter && !recorded.isProvablyGone {
                    throw GatewayStoreError(
                        .nodeInUse,
                        "node id '\(configuration.nodeID)' is in use by another process: \(recorded.summary), last "
                            + "heartbeat \(String(format: "%.1f", max(0, age))) s ago. Give each process its own "
                            + "delivery.nodeId (SEALEDPUSH_GATEWAY_NODE_ID), or stop that process. If it is dead, it "
                            + "counts as such in \(String(format: "%.1f", staleAfter - max(0, age))) s "
                            + "(delivery.nodeStaleSeconds: \(String(format: "%g", staleAfter))); start again then.")
                }
            }
            guard let reclaimed = try await store.takeOverNode(instance, replacing: recorded?.bootID, now: now) else {
                continue  // another process changed the record meanwhile: look again
            }
            startState.markStarted()
            var metadata: Logger.Metadata = ["leasesTakenBack": "\(reclaimed)"]
            if let recorded, recorded.bootID != instance.bootID {
                metadata["previous"] = "\(recorded.summary)"
                metadata["previousGone"] = "\(recorded.isProvablyGone ? "provably (its process is gone)" : "heartbeat stale")"
            }
            logger.info("node instance started", metadata: metadata)
            return
        }
        throw GatewayStoreError(
            .nodeInUse, "node id '\(configuration.nodeID)' was taken by another process starting at the same time")
    }

    /// Delivers until graceful shutdown or cancellation; call once.
    /// - Throws: What ``start()`` throws, when it was not called before.
    public func run() async throws {
        try await start()
        let signal = self.signal
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withTaskGroup(of: Void.self) { group in
                    if let webhook {
                        group.addTask { await webhook.run() }
                    }
                    await self.claimLoop(signal)
                    await self.shutdownProviders()
                    if let webhook {
                        webhook.finish()
                        let drain = webhook.configuration.drainDeadline
                        group.addTask { try? await Task.sleep(for: drain) }
                        await group.next()  // the queue drained, or the drain deadline passed
                        group.cancelAll()
                    }
                }
            } onGracefulShutdown: {
                signal.stop()
            }
        } onCancel: {
            signal.stop()
        }
        // A clean stop: the next start with this node id need not wait for the heartbeat to go stale.
        do { try await store.releaseNode(instance) } catch {
            logger.warning("releasing the node record failed", metadata: ["error": "\(error)"])
        }
        logger.info("delivery stopped")
    }

    /// Claims and sends until stopped, then waits for sends in flight (at most the grace period).
    private func claimLoop(_ signal: DeliverySignal) async {
        logger.info("delivery started", metadata: ["maxConcurrentSends": "\(configuration.maxConcurrentSends)"])
        // A discarding group: a finished send's child task is freed at once. (A plain task group keeps every
        // finished child until its result is collected with `next()`: this loop never collects, so each delivered
        // job used to stay in memory for the life of the process, about 12 KB a delivery.)
        await withDiscardingTaskGroup { group in
            let clock = ContinuousClock()
            var nextSweep = clock.now
            var nextHeartbeat = clock.now.advanced(by: configuration.nodeHeartbeatInterval)
            var storeFailures = 0
            let claimBatch = handOverLimit
            // Jobs handed over at enqueue: sent in a group of their own until the stream ends (below, at stop).
            let handedOver = self.handedOver
            group.addTask {
                await withDiscardingTaskGroup { sends in
                    for await jobs in handedOver {
                        for job in jobs {
                            self.metrics.recordStarted(.handOver, platform: job.address.platform)
                            sends.addTask {
                                await self.deliver(job)
                                signal.sendEnded()
                            }
                        }
                    }
                }
            }
            let gather = min(configuration.claimGatherInterval, configuration.pollInterval)
            // When the last claim found fewer jobs than it had slots for (the queue drained): the next one waits
            // until `gather` after it, wake-ups or not, so jobs queued one by one are claimed together.
            var drainedAt: ContinuousClock.Instant?
            var memoryRelease = IdleMemoryRelease()
            while !signal.isStopped {
                if clock.now >= nextHeartbeat {
                    nextHeartbeat = clock.now.advanced(by: configuration.nodeHeartbeatInterval)
                    do {
                        if try await !store.heartbeat(instance, now: configuration.now()) {
                            logger.critical(
                                "another process took this node id over: delivery stops here (each process needs its own delivery.nodeId)")
                            signal.stop()
                            continue
                        }
                        if heartbeatHealth.problem != nil {
                            logger.notice("node heartbeat works again: the store takes writes")
                        }
                        heartbeatHealth.recordSuccess()
                    } catch {
                        // The first failure of a run is an error (readiness turns 503); the next ones warnings.
                        let first = heartbeatHealth.problem == nil
                        heartbeatHealth.recordFailure(Self.heartbeatFailure(error))
                        logger.log(
                            level: first ? .error : .warning,
                            first ? "node heartbeat failed: the store does not take writes" : "node heartbeat failed",
                            metadata: ["error": "\(error)"])
                    }
                }
                if clock.now >= nextSweep {
                    nextSweep = clock.now.advanced(by: configuration.expirySweepInterval)
                    do {
                        let expired = try await store.expireOverdue(now: configuration.now())
                        let count = expired.values.reduce(0, +)
                        if count > 0 {
                            metrics.recordExpired(expired)
                            logger.info("expired jobs", metadata: ["count": "\(count)"])
                        }
                    } catch {
                        logger.warning("expiry sweep failed", metadata: ["error": "\(error)"])
                    }
                    if let retention = configuration.retention {
                        let cutoff = configuration.now().addingTimeInterval(-Self.seconds(retention))
                        do {
                            let purged = try await store.purgeExpired(before: cutoff, limit: 1_000)
                            if purged > 0 {
                                logger.info("purged notifications past retention", metadata: ["count": "\(purged)"])
                            }
                        } catch {
                            logger.warning("retention purge failed", metadata: ["error": "\(error)"])
                        }
                    }
                }
                let inFlight = signal.inFlight
                let free = configuration.maxConcurrentSends - inFlight
                if inFlight > 0 { memoryRelease.observe(idle: false, now: clock.now) }
                // Claim in batches (a quarter of the slots, at most 16) rather than one query per finished send.
                if free > 0 && (free >= claimBatch || inFlight == 0) {
                    if let drained = drainedAt, gather > .zero {
                        // A plain sleep, not a wait on the signal: each send's wake-up would end a wait early (and
                        // arm a new timer), thousands of times a second under load. Never cancelled while running
                        // (a stop is seen right after), so it leaves nothing allocated.
                        let end = drained.advanced(by: gather)
                        if clock.now < end { try? await Task.sleep(until: end, clock: clock) }
                        drainedAt = nil
                        if signal.isStopped { continue }
                    }
                    let jobs: [ClaimedJob]
                    let generation = signal.claimStarting()
                    do {
                        jobs = try await store.claim(
                            owner: leaseOwner, limit: free, leaseDuration: configuration.leaseDuration,
                            now: configuration.now())
                        storeFailures = 0
                    } catch {
                        storeFailures += 1
                        logger.warning(
                            "claiming jobs failed", metadata: ["error": "\(error)", "failures": "\(storeFailures)"])
                        await signal.wait(upTo: min(.seconds(5), configuration.pollInterval * min(storeFailures, 20)))
                        continue
                    }
                    for job in jobs {
                        metrics.recordStarted(.claim, platform: job.address.platform)
                        signal.sendStarted()
                        group.addTask {
                            await self.deliver(job)
                            signal.sendEnded()
                        }
                    }
                    // A full batch: there may be more due; claim again once slots are free.
                    if !jobs.isEmpty && jobs.count == free { await Task.yield() }
                    if jobs.count < free {
                        drainedAt = clock.now
                        signal.markDrained(since: generation)
                    }
                    if !jobs.isEmpty && jobs.count < free { await signal.wait(upTo: configuration.pollInterval) }
                    memoryRelease.observe(idle: jobs.isEmpty && inFlight == 0, now: clock.now)
                    if jobs.isEmpty { await signal.wait(upTo: configuration.pollInterval) }
                } else {
                    await signal.wait(upTo: configuration.pollInterval)
                }
            }
            // Stopping: no more claims or handed-over jobs. Sends in flight may finish within the grace period.
            handOver.finish()
            let deadline = clock.now.advanced(by: configuration.shutdownGracePeriod)
            logger.info("delivery stopping", metadata: ["inFlight": "\(signal.sendsRunning)"])
            while signal.sendsRunning > 0 && clock.now < deadline {
                await signal.wait(upTo: min(configuration.pollInterval, clock.now.duration(to: deadline)))
            }
            if signal.sendsRunning > 0 {
                logger.warning(
                    "sends still in flight at the end of the grace period are left to lease expiry",
                    metadata: ["inFlight": "\(signal.sendsRunning)"])
                group.cancelAll()
                await shutdownProviders()
            }
        }
    }

    /// A heartbeat failure's short reason for readiness (no message text: `/healthz` answers anyone).
    private static func heartbeatFailure(_ error: any Error) -> String {
        guard let error = error as? GatewayStoreError else { return "heartbeat failed" }
        // The SQLite store's file reasons are short phrases of its own (its result codes, readiness reads from it).
        for reason in ["database file deleted", "database file replaced"] where error.message.contains(reason) {
            return reason
        }
        return "heartbeat failed (\(error.code))"
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }

    private func shutdownProviders() async {
        for provider in providers.values { await provider.shutdown() }
    }

    /// Sends one claimed job through its platform's provider and ends it in the store.
    /// The logger with the job's ids, built only where something is logged (a job that is simply sent logs
    /// nothing, and building the metadata for every job showed in the delivery profile).
    private func jobLogger(_ job: ClaimedJob) -> Logger {
        var jobLogger = logger
        jobLogger[metadataKey: "job"] = "\(job.id)"
        jobLogger[metadataKey: "notification"] = "\(job.notificationID)"
        return jobLogger
    }

    private func deliver(_ job: ClaimedJob) async {
        let now = configuration.now()
        if job.expiresAt <= now {
            await finish(job, .expired)
            return
        }
        let platform = job.address.platform
        guard job.body.platform == platform else {
            // Sealed for the device's previous platform: its envelope names the other platform's topic.
            await finish(job, .failed(reason: "PlatformChanged"), requests: 0)
            return
        }
        let app: GatewayApp
        do {
            app = try await apps.app(id: job.appID)
        } catch {
            if Task.isCancelled { return }
            jobLogger(job).error("the job's app cannot be read", metadata: ["app": "\(job.appID)", "error": "\(error)"])
            let outcome = DeliveryDecision.retry(
                reason: "ProviderUnavailable", attempts: job.attempts, expiresAt: job.expiresAt,
                policy: configuration.jobRetry, now: configuration.now())
            await finish(job, outcome, requests: 0)
            return
        }
        guard let provider = providers[platform] else {
            await finish(job, .failed(reason: "NoProvider"), requests: 0)
            return
        }
        let started = ContinuousClock.now
        let delivery = await provider.deliver(job, app: app)
        metrics.recordSend(started.duration(to: .now), platform: platform)
        metrics.record(delivery, platform: platform)
        if delivery.possibleDuplicate {
            jobLogger(job).debug("sent again after an ambiguous failure (same body and ids)")
        }
        let outcome: JobOutcome
        var unregisteredAt: Date?
        switch delivery.result {
        case .abandoned:
            return  // abandoned at shutdown: the lease expires and another claim sends it again, identically
        case .sent(let providerID):
            outcome = .sent(apnsID: providerID)
        case .unregistered(let reason, let at):
            outcome = .unregistered(reason: reason)
            unregisteredAt = at
        case .failed(let reason):
            outcome = .failed(reason: reason)
        case .transient(let reason):
            outcome = DeliveryDecision.retry(
                reason: reason, attempts: job.attempts, expiresAt: job.expiresAt, policy: configuration.jobRetry,
                now: configuration.now())
        }
        await finish(
            job, outcome, unregisteredAt: unregisteredAt, requests: delivery.requests,
            transientReason: delivery.transientReasons.last)
    }

    /// Ends a job in the store; counts it and tells the webhook about a device that became unregistered.
    private func finish(
        _ job: ClaimedJob, _ outcome: JobOutcome, unregisteredAt: Date? = nil, requests: Int = 0,
        transientReason: String? = nil
    ) async {
        // Abandoned at the end of the shutdown grace period: the job stays claimed until its lease ends, when any
        // node sends it again (identically); nothing is written for it now.
        guard !Task.isCancelled else {
            jobLogger(job).debug("abandoned at shutdown: left to lease expiry", metadata: ["outcome": "\(outcome)"])
            return
        }
        let now = configuration.now()
        // The webhook's event is written with the job's end, should that end mark the device unregistered.
        var event: UnregisteredDeviceEvent?
        if case .unregistered(let reason) = outcome, webhook != nil {
            event = UnregisteredDeviceEvent(
                appID: job.appID, deviceID: job.deviceID, reason: reason, unregisteredAt: unregisteredAt ?? now)
        }
        let held: Bool
        do {
            held = try await finishes.submit(
                JobFinish(
                    jobID: job.id, owner: leaseOwner, outcome: outcome, requests: requests,
                    transientReason: transientReason, now: now, webhookEvent: event))
        } catch {
            // The lease will expire and the job be sent again (the same bytes, collapsed by APNs).
            jobLogger(job).error("finishing the job failed", metadata: ["outcome": "\(outcome)", "error": "\(error)"])
            return
        }
        guard held else {
            jobLogger(job).notice("lease lost before the job was finished", metadata: ["outcome": "\(outcome)"])
            return
        }
        metrics.record(outcome, platform: job.address.platform)
        switch outcome {
        case .sent: metrics.recordDelivered(acceptedAt: job.acceptedAt, sentAt: now, platform: job.address.platform)
        case .expired: break
        case .retry(let reason, let notBefore):
            jobLogger(job).info("job put back", metadata: ["reason": "\(reason)", "notBefore": "\(notBefore)"])
        case .failed(let reason):
            jobLogger(job).notice("job failed", metadata: ["reason": "\(reason)"])
        case .unregistered(let reason):
            jobLogger(job).notice("device unregistered", metadata: ["app": "\(job.appID)", "device": "\(job.deviceID)", "reason": "\(reason)"])
            // Written to the outbox if the store marked the device (its token had not changed since the claim).
            webhook?.outboxWritten()
        }
    }
}

/// Whether ``DeliveryService/start()`` succeeded.
private final class StartState: @unchecked Sendable {
    private let lock = NSLock()
    private var started: ContinuousClock.Instant?

    var isStarted: Bool { lock.withLock { started != nil } }
    var startedAt: ContinuousClock.Instant? { lock.withLock { started } }
    func markStarted() { lock.withLock { started = .now } }
}
