import Foundation
import Logging
import Metrics
import SealedPushAPNs
import ServiceLifecycle

/// The gateway's delivery workers on one node: claims due jobs from the ``GatewayStore`` with a lease, sends each
/// through its app's `APNsClient`, and ends each job with its outcome. Run it in a `ServiceGroup` (it is a
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
/// - **Claims**: as many jobs as there are free send slots (``DeliveryConfiguration/maxConcurrentSends``), owned by
///   ``DeliveryConfiguration/nodeID`` for ``DeliveryConfiguration/leaseDuration``; each is sent at once. A node
///   that dies leaves its leases to expire; another node's next claim takes those jobs over.
/// - **Clients**: one per app and APNs environment, built on first use from the app's `.p8` key, key id and team.
/// - **Outcomes**: sent with the `apns-id`; `Unregistered`/`BadDeviceToken`/`DeviceTokenNotForTopic` end the job `unregistered`, mark the
///   device (no more sends to it) and tell the webhook; transient failures (429, 500, 503, transport, timeouts,
///   after the client's own retries) come back after a backoff, at most ``DeliveryConfiguration/jobRetry``
///   `maxAttempts` claims in all; other refusals fail with APNs's reason; jobs past their ttl end `expired` unsent.
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
    private let clients: APNsClientRegistry
    private let webhook: UnregisteredWebhook?
    private let metrics: DeliveryMetrics
    private let logger: Logger

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
        self.configuration = configuration
        self.store = store
        self.logger = logger
        self.clients = APNsClientRegistry(store: store, configuration: configuration, logger: logger)
        self.webhook = try configuration.webhook.map { try UnregisteredWebhook(configuration: $0, logger: logger) }
        self.metrics = DeliveryMetrics(factory: metricsFactory)
    }

    /// Delivers until graceful shutdown or cancellation; call once.
    public func run() async throws {
        let signal = DeliverySignal()
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withTaskGroup(of: Void.self) { group in
                    if let webhook {
                        group.addTask { await webhook.run() }
                    }
                    await self.claimLoop(signal)
                    await self.clients.shutdown()
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
        logger.info("delivery stopped")
    }

    /// Claims and sends until stopped, then waits for sends in flight (at most the grace period).
    private func claimLoop(_ signal: DeliverySignal) async {
        logger.info("delivery started", metadata: ["maxConcurrentSends": "\(configuration.maxConcurrentSends)"])
        await withTaskGroup(of: Void.self) { group in
            let clock = ContinuousClock()
            var nextSweep = clock.now
            var storeFailures = 0
            let claimBatch = max(1, min(configuration.maxConcurrentSends / 4, 16))
            while !signal.isStopped {
                if clock.now >= nextSweep {
                    nextSweep = clock.now.advanced(by: configuration.expirySweepInterval)
                    do {
                        let expired = try await store.expireOverdue(now: configuration.now())
                        if expired > 0 {
                            for _ in 0..<expired { metrics.record(.expired) }
                            logger.info("expired jobs", metadata: ["count": "\(expired)"])
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
                // Claim in batches (a quarter of the slots, at most 16) rather than one query per finished send.
                if free > 0 && (free >= claimBatch || inFlight == 0) {
                    let jobs: [ClaimedJob]
                    do {
                        jobs = try await store.claim(
                            owner: configuration.nodeID, limit: free, leaseDuration: configuration.leaseDuration,
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
                        signal.sendStarted()
                        group.addTask {
                            await self.deliver(job)
                            signal.sendEnded()
                        }
                    }
                    // A full batch: there may be more due; claim again once slots are free.
                    if !jobs.isEmpty && jobs.count == free { await Task.yield() }
                    if !jobs.isEmpty && jobs.count < free { await signal.wait(upTo: configuration.pollInterval) }
                    if jobs.isEmpty { await signal.wait(upTo: configuration.pollInterval) }
                } else {
                    await signal.wait(upTo: configuration.pollInterval)
                }
            }
            // Stopping: no more claims. Sends in flight may finish within the grace period.
            let deadline = clock.now.advanced(by: configuration.shutdownGracePeriod)
            logger.info("delivery stopping", metadata: ["inFlight": "\(signal.inFlight)"])
            while signal.inFlight > 0 && clock.now < deadline {
                await signal.wait(upTo: min(configuration.pollInterval, clock.now.duration(to: deadline)))
            }
            if signal.inFlight > 0 {
                logger.warning(
                    "sends still in flight at the end of the grace period are left to lease expiry",
                    metadata: ["inFlight": "\(signal.inFlight)"])
                group.cancelAll()
                await clients.shutdown()
            }
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }

    /// Sends one claimed job and ends it in the store.
    private func deliver(_ job: ClaimedJob) async {
        var jobLogger = logger
        jobLogger[metadataKey: "job"] = "\(job.id)"
        jobLogger[metadataKey: "notification"] = "\(job.notificationID)"
        let now = configuration.now()
        if job.expiresAt <= now {
            await finish(job, .expired, logger: jobLogger)
            return
        }
        let client: APNsClient
        let app: GatewayApp
        do {
            app = try await clients.app(id: job.appID)
            client = try await clients.client(for: app, environment: job.environment)
        } catch {
            if Task.isCancelled { return }
            jobLogger.error("no APNs client for the app", metadata: ["app": "\(job.appID)", "error": "\(error)"])
            let outcome = DeliveryDecision.retry(
                reason: "ProviderUnavailable", attempts: job.attempts, expiresAt: job.expiresAt,
                policy: configuration.jobRetry, now: configuration.now())
            await finish(job, outcome, logger: jobLogger)
            return
        }
        let token: DeviceToken
        do { token = try DeviceToken(hex: job.apnsToken) } catch {
            await finish(job, .unregistered(reason: APNsReason.badDeviceToken.rawValue), logger: jobLogger)
            return
        }
        let notification = APNsNotification(
            deviceToken: token, topic: app.topic, payload: job.body.bytes,
            priority: job.priority == 10 ? .immediate : .powerConsiderate, expiration: job.expiresAt,
            collapseID: DeliveryIdentifiers.collapseID(notificationID: job.notificationID, collapseID: job.collapseID),
            apnsID: DeliveryIdentifiers.apnsID(notificationID: job.notificationID, deviceID: job.deviceID))
        let started = ContinuousClock.now
        let report = await client.send(notification)
        metrics.recordSend(started.duration(to: .now))
        if Task.isCancelled, report.result.failure?.reason == .clientShutdown {
            return  // abandoned at shutdown: the lease expires and another claim sends it again, identically
        }
        let outcome = DeliveryDecision.outcome(
            for: report.result, attempts: job.attempts, expiresAt: job.expiresAt, policy: configuration.jobRetry,
            now: configuration.now())
        if report.possibleDuplicate {
            jobLogger.debug("sent again after an ambiguous failure (same body, apns-id and collapse id)")
        }
        await finish(job, outcome, logger: jobLogger, unregisteredAt: report.result.failure?.timestamp)
    }

    /// Ends a job in the store; counts it and tells the webhook about a device that became unregistered.
    private func finish(_ job: ClaimedJob, _ outcome: JobOutcome, logger: Logger, unregisteredAt: Date? = nil) async {
        let now = configuration.now()
        let held: Bool
        do {
            held = try await store.finish(jobID: job.id, owner: configuration.nodeID, outcome: outcome, now: now)
        } catch {
            // The lease will expire and the job be sent again (the same bytes, collapsed by APNs).
            logger.error("finishing the job failed", metadata: ["outcome": "\(outcome)", "error": "\(error)"])
            return
        }
        guard held else {
            logger.notice("lease lost before the job was finished", metadata: ["outcome": "\(outcome)"])
            return
        }
        metrics.record(outcome)
        switch outcome {
        case .sent, .expired: break
        case .retry(let reason, let notBefore):
            logger.info("job put back", metadata: ["reason": "\(reason)", "notBefore": "\(notBefore)"])
        case .failed(let reason):
            logger.notice("job failed", metadata: ["reason": "\(reason)"])
        case .unregistered(let reason):
            logger.notice("device unregistered", metadata: ["app": "\(job.appID)", "device": "\(job.deviceID)", "reason": "\(reason)"])
            guard let webhook else { return }
            // Only when the store marked the device (its token had not changed since the claim).
            guard let device = try? await store.device(appID: job.appID, deviceID: job.deviceID),
                let markedAt = device.unregisteredAt, device.apnsToken == job.apnsToken
            else { return }
            webhook.notify(
                UnregisteredDeviceEvent(
                    appID: job.appID, deviceID: job.deviceID, reason: reason, unregisteredAt: unregisteredAt ?? markedAt))
        }
    }
}
