import SealedPushCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The gateway's storage: apps, API keys, devices, notifications and the durable per-device job queue.
///
/// Two implementations share one test suite: ``SQLiteGatewayStore`` (embedded, one file in WAL mode) and
/// ``PostgresGatewayStore`` (several gateway nodes on one database). Every app-scoped call takes the app id and
/// never reads or changes another app's rows. Times are passed in (`now`) so callers and tests decide the clock;
/// stores keep milliseconds.
///
/// Only sealed bodies are stored (``SealedBody``): content in clear never reaches the database. Private keys are
/// never stored either; apps hold paths to 0600 files.
///
/// The queue: ``enqueue(_:)`` commits a notification with all its jobs in one transaction before the HTTP layer
/// answers `202`. Workers ``claim(owner:limit:leaseDuration:now:)`` due jobs with a lease, send, then
/// ``finish(jobID:owner:outcome:now:)``. A worker that dies loses its leases when they expire, and the next claim
/// takes the jobs over.
public protocol GatewayStore: Sendable {
    // MARK: Schema and lifecycle

    /// Applies the migrations the database lacks, in order; safe to call on every start and from several nodes.
    /// - Returns: How many migrations were applied now (0 when the schema was current).
    /// - Throws: ``GatewayStoreError`` `schemaTooNew` when a newer gateway migrated the database.
    func migrate() async throws -> Int

    /// The highest migration applied (0 for an empty database).
    func schemaVersion() async throws -> Int

    /// Answers when the database does (readiness for `/healthz`).
    func ping() async throws

    /// Why the store cannot take writes now, judged by its own latest writes (asking writes nothing): the last one
    /// failed for want of the database — full disk, read-only database or standby, I/O error, connection lost, no
    /// answer within the call's deadline — not for what was written. Nil while writes work. A failure counts until a
    /// write succeeds again, or for ``StoreWriteHealth/failureWindow``. Readiness for `/healthz`, beside ``ping()``.
    var writeProblem: String? { get }

    /// Closes connections; the store is unusable afterwards.
    func close() async throws

    // MARK: Apps and API keys

    /// Creates or replaces an app.
    /// - Parameters:
    ///   - app: The app record (paths to its key files, never keys).
    ///   - now: The time recorded.
    func putApp(_ app: GatewayApp, now: Date) async throws

    /// The app with this id, or nil.
    func app(id: String) async throws -> GatewayApp?

    /// Every app, ordered by id.
    func apps() async throws -> [GatewayApp]

    /// Removes an app and everything of it, in one transaction: its API keys, devices, notifications, queued and
    /// sent jobs, and opened receipt ids. Files it references (keys, identities) are left where they are.
    /// - Returns: What was removed, or nil when there is no such app.
    func removeApp(id: String) async throws -> AppRemoval?

    /// Adds an API key (its digest only).
    /// - Throws: ``GatewayStoreError`` `unknownApp` when its app does not exist.
    func addAPIKey(_ key: StoredAPIKey) async throws

    /// The stored key with this public id, or nil.
    func apiKey(id: String) async throws -> StoredAPIKey?

    /// Removes an API key; returns false when there was none.
    func removeAPIKey(id: String) async throws -> Bool

    /// The API keys of an app (nil: of every app), ordered by app and creation time (digests included; never the key).
    func apiKeys(appID: String?) async throws -> [StoredAPIKey]

    /// Records that a key authenticated a request at `at` (kept only if later than the recorded time).
    func touchAPIKey(id: String, at: Date) async throws

    // MARK: Devices

    /// Registers a device or replaces its platform, token, environment and registration: the call that arrives
    /// last wins (`Specs/keyring-v1.md` §4, arrival order, never `createdAt`). Clears an unregistered mark. The
    /// caller has validated the registration (key id recomputed, `createdAt` at most 600 s ahead). `userID` replaces
    /// the device's user (nil: none). Another registered device of the app with the same address loses it (one
    /// device per token, ``DevicePutResult/tokenTakenFrom``). The key id is stored in lowercase, its text form
    /// (``device(appID:keyID:)`` and ``enqueue(_:)`` compare key ids as exact text).
    /// - Throws: ``GatewayStoreError`` `unknownApp` when the app does not exist.
    func putDevice(
        appID: String, deviceID: String, address: PushAddress, registration: DeviceRegistration, userID: String?,
        now: Date
    ) async throws -> DevicePutResult

    /// The sendable devices (not marked unregistered) of this app's users among `userIDs`, ordered by device id.
    func devices(appID: String, userIDs: [String]) async throws -> [StoredDevice]

    /// The device of this app, or nil (also when it exists in another app).
    func device(appID: String, deviceID: String) async throws -> StoredDevice?

    /// The devices of this app among `deviceIDs` (missing ones are left out), ordered by device id.
    func devices(appID: String, deviceIDs: [String]) async throws -> [StoredDevice]

    /// Removes a device; its waiting and claimed jobs end `unregistered` (reason `DeviceRemoved`).
    /// - Returns: False when the app has no such device.
    func removeDevice(appID: String, deviceID: String, now: Date) async throws -> Bool

    /// Removes every device of a user (whatever its state), as ``removeDevice(appID:deviceID:now:)`` does each.
    /// - Returns: The ids of the devices removed, sorted (empty when the user has none in this app).
    func removeDevices(appID: String, userID: String, now: Date) async throws -> [String]

    /// Marks a device unregistered (no more sends); its waiting and claimed jobs end `unregistered`.
    /// - Returns: False when the app has no such device.
    func markDeviceUnregistered(appID: String, deviceID: String, reason: String, at: Date) async throws -> Bool

    // MARK: Notifications and the queue

    /// The id of the notification an earlier request with this idempotency key created, if any.
    func notificationID(appID: String, idempotencyKey: String) async throws -> UUID?

    /// The notification an earlier request with this idempotency key created and the request digest kept with the
    /// key (nil for a key stored before digests were kept), if the app used the key.
    func idempotentRequest(appID: String, idempotencyKey: String) async throws -> (id: UUID, requestDigest: String?)?

    /// Commits a notification and one job per device in one transaction, with the devices its send left out
    /// (``NewNotification/skippedDevices``). A notification whose idempotency key the app used before writes nothing
    /// and returns the first id (`replayed`) with the first request's digest and devices left out. Jobs
    /// of devices marked unregistered start `unregistered`; the others start `queued`, or `claimed` under the
    /// notification's ``NewNotification/lease`` (returned in ``EnqueueResult/claimed`` exactly as a claim by the
    /// lease's owner would return them: first attempt, the device's current address).
    /// A job whose ``NewNotification/Job/keyID`` is set must have been sealed to its device's current registration:
    /// that key id, and a body in the form of the device's platform (checked in the same transaction, so a sender may
    /// seal from a device record it read earlier).
    /// - Throws: ``GatewayStoreError`` `unknownDevice` (field `devices[i]`) when a device is not in the app;
    ///   `deviceKeyChanged` (field `devices[i]`) when a job's key id or platform is not its device's any more;
    ///   `invalidArgument` for no device, a repeated device, a bad priority, expiry or lease.
    func enqueue(_ notification: NewNotification) async throws -> EnqueueResult

    /// Commits notifications as ``enqueue(_:)`` does each, answering each in order: its result, or the
    /// ``GatewayStoreError`` that refused it alone (`unknownDevice`, `deviceKeyChanged`, `invalidArgument`), which
    /// leaves the others committed; of two with one idempotency key, one is committed and the other replays it.
    /// SQLite and PostgreSQL commit the batch in one durable transaction (group commit); the default enqueues each
    /// concurrently in its own.
    /// - Throws: What fails the whole batch (the database), in which case none was committed on SQLite or PostgreSQL.
    func enqueueBatch(_ notifications: [NewNotification]) async throws -> [Result<EnqueueResult, GatewayStoreError>]

    /// Claims up to `limit` due jobs for `owner` until `now + leaseDuration`: queued jobs whose retry time has
    /// come, and claimed jobs whose lease expired (taken over). Never hands one job to two claimers whose leases
    /// overlap. Skips jobs of expired notifications and of unregistered devices. Increments `attempts`.
    func claim(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws -> [ClaimedJob]

    /// Ends or postpones a job `owner` claimed, adding the APNs requests this claim made to the job's count.
    /// - Parameters:
    ///   - requests: APNs requests made for the job during this claim (the client's own retries included; 0 when
    ///     nothing was sent).
    ///   - transientReason: The reason of the last request that failed transiently during this claim, if any; kept
    ///     as the job's last transient reason (an earlier one stays when nil).
    /// - Returns: False when `owner` no longer holds it (its lease was taken over, or the device was removed):
    ///   nothing is changed then.
    func finish(
        jobID: Int64, owner: String, outcome: JobOutcome, requests: Int, transientReason: String?, now: Date
    ) async throws -> Bool

    /// Ends or postpones several claimed jobs, each exactly as
    /// ``finish(jobID:owner:outcome:requests:transientReason:now:)`` would (the delivery loop's group commit: the
    /// ends of sends that finished together are written together). The SQLite store writes a batch in one
    /// transaction, so a failure writes none of it; the default writes each job on its own, concurrently.
    /// - Parameter batch: The jobs' ends.
    /// - Returns: For each job, in order, whether its owner still held it.
    func finish(_ batch: [JobFinish]) async throws -> [Bool]

    /// Moves waiting jobs (and claimed ones whose lease expired) of notifications past their expiry to
    /// `expired`.
    /// - Returns: How many, by the platform of each job's device (platforms with none are absent). Every open job
    ///   has its device: removing a device ends its open jobs in the same transaction.
    func expireOverdue(now: Date) async throws -> [PushPlatform: Int]

    /// Deletes notifications that expired before `cutoff`, with their jobs (sealed bodies), statuses, idempotency
    /// keys and webhook events, the ids of receipts that expired before it, and webhook events given up before it: the
    /// retention limit, so the database does not grow without end. Oldest first, at most `limit` of each per call.
    /// - Parameters:
    ///   - cutoff: Notifications whose `expiresAt` is before this go.
    ///   - limit: The most notifications deleted by this call (1...10,000).
    /// - Returns: How many notifications were deleted.
    func purgeExpired(before cutoff: Date, limit: Int) async throws -> Int

    /// A notification of this app with each device's delivery and the devices its send left out, or nil (also when
    /// it belongs to another app).
    func notificationStatus(appID: String, notificationID: UUID) async throws -> NotificationStatus?

    /// Withdraws a notification (`DELETE …/notifications/{id}`) in one transaction: its `queued` jobs end
    /// `withdrawn` (reason ``Withdrawal/reasonQueued``) and are never sent; its `claimed` ones too (reason
    /// ``Withdrawal/reasonInFlight``: a worker's send may be going out, so their devices count as reached, and the
    /// worker's later finish changes nothing). Safe to repeat: a second call withdraws nothing more and answers
    /// the same reached devices.
    /// - Returns: nil when the app has no such notification.
    func withdraw(appID: String, notificationID: UUID, now: Date) async throws -> Withdrawal?

    // MARK: Receipts

    /// The registered (not unregistered) device of this app whose current key has this id, or nil.
    /// - Parameter keyID: The key id in lowercase hex.
    func device(appID: String, keyID: String) async throws -> StoredDevice?

    /// Records a receipt that opened, in one transaction: remembers its id until its expiry (a second time is
    /// ``ReceiptRecording/replayed``), finds the job of the app that sent `messageID` sealed to that key
    /// (else ``ReceiptRecording/unknownMessage``, and nothing is written), and keeps the first receipt on it.
    func recordReceipt(_ receipt: ReceivedReceipt) async throws -> ReceiptRecording

    /// Records receipts as ``recordReceipt(_:)`` does each, in as few transactions as the store can (SQLite and
    /// PostgreSQL: one; the default records each in its own), answering each in order. Two of the same receipt id in
    /// one batch: the second is ``ReceiptRecording/replayed``.
    func recordReceipts(_ receipts: [ReceivedReceipt]) async throws -> [ReceiptRecording]

    /// Outstanding jobs of every app.
    func queueDepth() async throws -> QueueDepth

    /// Outstanding jobs per app (with the oldest queued one's due time) and the leases each process holds.
    func queueSummary() async throws -> QueueSummary

    // MARK: Nodes

    /// The instance recorded for a node id (the running one, or one that stopped without ``releaseNode(_:)``).
    func node(id nodeID: String) async throws -> NodeInstance?

    /// Every node record (running processes, and ones that stopped without ``releaseNode(_:)``), by node id.
    func nodes() async throws -> [NodeInstance]

    /// Records `instance` as its node id's running incarnation — only while the record still names
    /// `previousBootID` (nil: no record), so two starts cannot both win — and makes every job leased by another
    /// incarnation of the node id (lease owner `nodeID` or `nodeID/…`) claimable at once: queued, its retry time
    /// unchanged, its attempts kept. The webhook outbox's events such an incarnation held are released too
    /// (claimable at once by ``claimWebhookEvents(owner:limit:leaseDuration:now:)``).
    /// - Returns: How many jobs were given back, or nil when the record no longer names `previousBootID`.
    func takeOverNode(_ instance: NodeInstance, replacing previousBootID: String?, now: Date) async throws -> Int?

    /// Stores `now` as the instance's heartbeat.
    /// - Returns: False when the record no longer names this instance (another process took the node id over).
    func heartbeat(_ instance: NodeInstance, now: Date) async throws -> Bool

    /// Deletes the node's record if it still names this instance (a clean stop: the next start need not wait).
    func releaseNode(_ instance: NodeInstance) async throws

    /// The jobs leased now by any incarnation of `nodeID` (lease owner `nodeID` or `nodeID/…`), by job id.
    func leasedJobs(nodeID: String) async throws -> [LeasedJob]

    // MARK: Webhook outbox

    // Events are written by the transactions that make them true: ``finish(_:)`` with a
    // ``JobFinish/webhookEvent`` that marks its device unregistered, ``recordReceipts(_:)`` of a job's first receipt
    // that ``ReceivedReceipt/forwardsToWebhook``. A node's webhook takes them from here, deletes each once the
    // receiver took it, and marks it given up (kept for the operator) when it will not post it again.

    /// Leases up to `limit` outbox events to `owner` until `now + leaseDuration`, oldest first: those nobody holds and
    /// those whose lease expired (their holder died); never given-up ones. Only events of the types this gateway posts
    /// are leased: a type a newer gateway wrote stays for a node that knows it.
    /// - Returns: The events, with the attempts earlier holders made.
    func claimWebhookEvents(owner: String, limit: Int, leaseDuration: Duration, now: Date) async throws
        -> [StoredWebhookEvent]

    /// Extends every outbox lease `owner` holds to `now + leaseDuration` (a node posting events keeps them).
    /// - Returns: How many it holds.
    func renewWebhookEvents(owner: String, leaseDuration: Duration, now: Date) async throws -> Int

    /// Writes the attempts made so far on an outbox event `owner` holds and goes on holding (a failed attempt, before
    /// its retry): a holder that dies, or stops without giving the event back, costs none of them — the next holder
    /// spends only what is left of ``UnregisteredWebhookConfiguration/maxAttempts``.
    /// - Returns: False when `owner` no longer held it (its lease expired and another node took it).
    func recordWebhookAttempts(id: Int64, owner: String, attempts: Int) async throws -> Bool

    /// Deletes an outbox event `owner` holds: the receiver took it.
    /// - Returns: False when `owner` no longer held it (its lease expired and another node took it).
    func endWebhookEvent(id: Int64, owner: String) async throws -> Bool

    /// The events in the outbox: those to post (waiting, held by a node, or held by one that died — the backlog an
    /// operator watches when a receiver is down), and those given up and kept.
    func webhookOutboxDepth() async throws -> WebhookOutboxDepth

    /// Gives up an outbox event `owner` holds (its attempts spent, or refused by the receiver): it stays in the outbox,
    /// unclaimed, with `failure` (its first ``GivenUpWebhookEvent/keptFailureLength`` characters) and the attempts
    /// made, until the operator sends it again or the retention purge (``purgeExpired(before:limit:)``) deletes it.
    /// - Returns: False when `owner` no longer held it.
    func giveUpWebhookEvent(id: Int64, owner: String, attempts: Int, failure: String, now: Date) async throws -> Bool

    /// The given-up events, oldest given up first, at most `limit` (1...10,000); of one app when `appID` is set.
    func givenUpWebhookEvents(appID: String?, limit: Int) async throws -> [GivenUpWebhookEvent]

    /// Sends given-up events again: they become claimable at once with no attempts counted, keeping their delivery
    /// ids. `ids` nil: every given-up event (of `appID` when set); otherwise those of `ids` that are given up (and of
    /// `appID` when set).
    /// - Returns: How many.
    func redeliverWebhookEvents(appID: String?, ids: [Int64]?) async throws -> Int

    /// Gives an outbox event `owner` holds back (a node stopping before it was delivered), with the attempts made so
    /// far: the next node to claim it goes on from there.
    /// - Returns: False when `owner` no longer held it.
    func releaseWebhookEvent(id: Int64, owner: String, attempts: Int) async throws -> Bool
}

extension GatewayStore {
    /// Enqueues each concurrently, each in its own transaction.
    public func enqueueBatch(_ notifications: [NewNotification]) async throws -> [Result<EnqueueResult, GatewayStoreError>] {
        try await withThrowingTaskGroup(of: (Int, Result<EnqueueResult, GatewayStoreError>).self) { group in
            for (index, notification) in notifications.enumerated() {
                group.addTask {
                    do { return (index, .success(try await self.enqueue(notification))) } catch let error
                        as GatewayStoreError where error.refusesOneNotification
                    {
                        return (index, .failure(error))
                    }
                }
            }
            var results = [Result<EnqueueResult, GatewayStoreError>?](repeating: nil, count: notifications.count)
            for try await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }

    /// Records each receipt in its own call.
    public func recordReceipts(_ receipts: [ReceivedReceipt]) async throws -> [ReceiptRecording] {
        var answers: [ReceiptRecording] = []
        for receipt in receipts { answers.append(try await recordReceipt(receipt)) }
        return answers
    }

    /// Writes each job's end on its own, concurrently (see ``finish(_:)``).
    public func finish(_ batch: [JobFinish]) async throws -> [Bool] {
        try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for (index, end) in batch.enumerated() {
                group.addTask {
                    let held = try await finish(
                        jobID: end.jobID, owner: end.owner, outcome: end.outcome, requests: end.requests,
                        transientReason: end.transientReason, now: end.now)
                    return (index, held)
                }
            }
            var results = [Bool](repeating: false, count: batch.count)
            for try await (index, held) in group { results[index] = held }
            return results
        }
    }

    /// Ends or postpones a job `owner` claimed, counting one APNs request (see
    /// ``finish(jobID:owner:outcome:requests:transientReason:now:)``).
    public func finish(jobID: Int64, owner: String, outcome: JobOutcome, now: Date) async throws -> Bool {
        try await finish(jobID: jobID, owner: owner, outcome: outcome, requests: 1, transientReason: nil, now: now)
    }

    /// Registers an APNs device (see ``putDevice(appID:deviceID:address:registration:userID:now:)``).
    public func putDevice(
        appID: String, deviceID: String, apnsToken: String, environment: APNsEnvironment,
        registration: DeviceRegistration, userID: String?, now: Date
    ) async throws -> DevicePutResult {
        try await putDevice(
            appID: appID, deviceID: deviceID, address: .apns(token: apnsToken, environment: environment),
            registration: registration, userID: userID, now: now)
    }

    /// Registers a device without a user (see the requirement).
    public func putDevice(
        appID: String, deviceID: String, apnsToken: String, environment: APNsEnvironment,
        registration: DeviceRegistration, now: Date
    ) async throws -> DevicePutResult {
        try await putDevice(
            appID: appID, deviceID: deviceID, apnsToken: apnsToken, environment: environment,
            registration: registration, userID: nil, now: now)
    }

    /// The app a presented bearer key acts for, or nil when the key is unknown, wrong or expired.
    /// - Parameters:
    ///   - bearer: The `Authorization: Bearer` token.
    ///   - now: The time an expiry is checked against.
    public func authenticate(bearer: String, now: Date = Date()) async throws -> String? {
        try await authenticatedKey(bearer: bearer, now: now)?.appID
    }

    /// The stored key a presented bearer key matches, or nil when it is unknown, wrong or expired at `now`.
    ///
    /// The key's public id finds the stored digest; the SHA-256 of the presented text is compared with it in
    /// constant time.
    /// - Parameters:
    ///   - bearer: The `Authorization: Bearer` token.
    ///   - now: The time an expiry is checked against.
    public func authenticatedKey(bearer: String, now: Date = Date()) async throws -> StoredAPIKey? {
        guard let presented = APIKey(parsing: bearer), let stored = try await apiKey(id: presented.id),
            stored.accepts(presented, at: now)
        else { return nil }
        return stored
    }
}
