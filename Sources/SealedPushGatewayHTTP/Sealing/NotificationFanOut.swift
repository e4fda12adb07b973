import Foundation
import Logging
import Metrics
import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// The send operation: content sealed at once to each device's current registration, then the notification and
/// its jobs committed in one transaction (`GatewayStore.enqueue`). Only sealed bodies leave this type.
struct NotificationFanOut: Sendable {
    /// What a send answers.
    struct Accepted: Sendable {
        var id: UUID
        var deviceCount: Int
        var replayed: Bool
    }

    let calls: StoreCalls
    let sealers: AppSealers
    let overflow: OverflowConfiguration?
    let fetcher: AttachmentFetcher?
    let metrics: GatewayMetrics
    let limiter: AppRateLimiter
    let clock: @Sendable () -> Date
    /// Sends committed in groups (one SQLite transaction and fsync for the sends that arrive together); each
    /// answer is its own result or the store's refusal of it alone.
    let enqueues: GroupCommit<NewNotification, Result<EnqueueResult, GatewayStoreError>>
    /// The delivery service of this process, if it delivers: a send's jobs go to it directly when it has free slots
    /// and an empty queue (``DeliveryService/reserve(jobs:)``: enqueued claimed, sent without a claim); otherwise
    /// they are queued and it is told so (it claims them at once, not at its next poll).
    let delivery: DeliveryService?
    /// The apps read in the last second: a stream of sends reads its app once a second, not once each (a change to an
    /// app — new credentials, a rotated identity, its removal — reaches sends within that second).
    let apps = RecentlyRead<GatewayApp>()
    /// The devices read in the last ten seconds, by ``deviceKey(appID:deviceID:)``: a stream of sends to the same
    /// devices reads each once in that time. What a kept record decides is only the key sealed to and the platform's
    /// format, and the enqueue's transaction checks both against the device's registration (with its token and
    /// whether it is still registered, read there as before): a device registered again through another node is
    /// refused there (`deviceKeyChanged`), read afresh and sealed to again. A device this node registers or removes
    /// is dropped at once (``GatewayHTTPServer``). At most 10,000 are kept (a few MB); past that the memory starts
    /// over, and sends to more devices than that read them as before.
    private let devices = RecentlyRead<StoredDevice>(lifetime: .seconds(10), capacity: 10_000)

    /// The key of a device in ``devices``.
    private static func deviceKey(appID: String, deviceID: String) -> String { appID + "/" + deviceID }

    /// Drops the devices this node just changed in the store (registered, removed, or whose token another device
    /// took), so the next send reads them afresh.
    /// - Parameters:
    ///   - appID: Their app.
    ///   - deviceIDs: Their ids.
    func forgetDevices(appID: String, _ deviceIDs: [String]) {
        for deviceID in deviceIDs { devices.forget(id: Self.deviceKey(appID: appID, deviceID: deviceID)) }
    }

    /// Seals and enqueues; answers after the commit.
    /// - Parameters:
    ///   - appID: The sending app.
    ///   - request: The validated send.
    ///   - idempotencyKey: The request's `Idempotency-Key`, if any.
    ///   - requestDigest: The request body's digest (`NewNotification.requestDigest(of:)`), kept with the key.
    ///   - id: The new notification's id.
    ///   - stampID: Whether the content carries the notification's id as its `notification-id` (every send; an
    ///     update and the control messages set theirs themselves).
    ///   - skipMissingDevices: Leave out named devices the app no longer has, instead of refusing (the gateway's
    ///     own follow-ups to earlier sends); nil is answered when none is left.
    ///   - background: Carry it to iPhones as a background push (`Specs/control-v1.md` §2.3: a control message
    ///     that shows nothing; the caller sets priority 5); FCM devices get their data message as always.
    /// - Returns: What the send answers; nil only with `skipMissingDevices` when no device is left.
    /// - Throws: ``GatewayAPIError`` `422 idempotencyKeyReused` when the key was used with another body.
    func send(
        appID: String, request: SendRequest, idempotencyKey: String?, requestDigest: String?,
        id: UUID = TimeOrderedUUID.make(), stampID: Bool = true, skipMissingDevices: Bool = false,
        background: Bool = false
    ) async throws -> Accepted? {
        if let idempotencyKey,
            let earlier = try await replayed(appID: appID, idempotencyKey: idempotencyKey, requestDigest: requestDigest)
        {
            return earlier
        }
        let app = try await apps.record(id: appID) { try await calls.run("app", { try await $0.app(id: appID) }) }
        guard let app else {
            throw GatewayAPIError.notFound("app \(appID) is not configured in this gateway")
        }
        var named = request.devices
        var byID = try await readDevices(appID: appID, deviceIDs: named)
        if skipMissingDevices {
            named = named.filter { byID[$0].map { $0.unregisteredAt == nil } ?? false }
            if named.isEmpty { return nil }
        }
        try Self.requireRegistered(named, byID)
        // Users: each one's sendable devices, after the devices named directly, without repeats.
        var wanted = named
        if !request.users.isEmpty {
            let users = request.users
            let usersDevices = try await calls.run("users") { try await $0.devices(appID: appID, userIDs: users) }
            for device in usersDevices where byID[device.deviceID] == nil {
                byID[device.deviceID] = device
                wanted.append(device.deviceID)
            }
            guard !wanted.isEmpty else {
                throw GatewayAPIError(
                    .unprocessableContent, "noDevices", "none of the users named has a registered device in this app",
                    field: "users")
            }
            guard wanted.count <= SendRequest.maxDevices else {
                throw GatewayAPIError.invalid(
                    "the users named have \(wanted.count) devices with those named directly; a send reaches at most "
                        + "\(SendRequest.maxDevices)", field: "users")
            }
        }

        if let wait = limiter.admitDevices(appID: appID, count: wanted.count) {
            metrics.recordRateLimited(appID: appID, limit: "devices")
            throw GatewayAPIError.rateLimited("devices", appID: appID, retryAfter: wait)
        }
        let sealer = try await sealers.sealer(for: app, placeholder: request.placeholder)
        let now = clock()
        let nowSeconds = UInt64(max(0, now.timeIntervalSince1970.rounded(.down)))
        // Accepted at `now` (the status's `createdAt`, to the millisecond); the expiry is the envelopes' own, whole
        // seconds from `nowSeconds`.
        let createdAt = now
        let issuedAt = Date(timeIntervalSince1970: TimeInterval(nowSeconds))
        let ttl = UInt64(request.ttl)

        // Attachments: each encrypted once into the blob store; its descriptor (URL, key) goes into every
        // recipient's sealed content.
        var content = request.content
        if stampID { content.notificationID = id.lowercasedString }
        var sources = request.attachments
        let descriptors = try await encryptAttachments(&sources)
        if !descriptors.isEmpty { content.attachments = (content.attachments ?? []) + descriptors }

        // Inline, or (with overflow) a preview with the full content stored once, encrypted.
        let envelopeContent = try await prepare(content, sealer: sealer)
        // Encoded and padded once for every device; only the key agreement and the AEAD run per device.
        let prepared: PreparedContent
        do {
            prepared = try sealer.prepare(envelopeContent)
        } catch let error as SealedPushError {
            throw Self.sealingError(error, field: "content")
        }

        var jobs = try await seal(
            prepared, app: app, sealer: sealer, to: wanted, byID, ttl: ttl, now: nowSeconds, background: background)
        // The enqueue checks each job's key against its device's registration in its own transaction: a device
        // registered again since it was read (through another node) is read and sealed to afresh.
        var attempt = 1
        var lease: JobLease?
        var result: EnqueueResult
        sending: while true {
            let reserved = jobs.count
            lease = delivery?.reserve(jobs: reserved)
            let notification = NewNotification(
                id: id, appID: appID, idempotencyKey: idempotencyKey, priority: request.priority,
                // The default collapse id makes a resend replace, never double (the contract).
                collapseID: request.collapseID ?? id.lowercasedString, createdAt: createdAt,
                expiresAt: issuedAt.addingTimeInterval(TimeInterval(request.ttl)), jobs: jobs,
                requestDigest: requestDigest, lease: lease)
            let answer: Result<EnqueueResult, GatewayStoreError>
            do {
                answer = try await enqueues.submit(notification)
            } catch {
                if lease != nil { delivery?.deliver([], reserved: reserved) }
                throw error
            }
            switch answer {
            case .success(let committed):
                result = committed
                break sending
            case .failure(let refused):
                if lease != nil { delivery?.deliver([], reserved: reserved) }
                guard refused.code == .deviceKeyChanged, attempt < Self.sealAttempts else {
                    throw calls.apiError(refused, "enqueue")
                }
            }
            attempt += 1
            forgetDevices(appID: appID, wanted)
            byID = try await readDevices(appID: appID, deviceIDs: wanted)
            try Self.requireRegistered(wanted, byID)
            jobs = try await seal(
                prepared, app: app, sealer: sealer, to: wanted, byID, ttl: ttl, now: nowSeconds, background: background)
        }
        if lease != nil {
            delivery?.deliver(result.claimed, reserved: jobs.count)
        } else if !result.replayed {
            delivery?.jobsQueued()
        }
        // A concurrent request took the key first: the same rule as the early check.
        if result.replayed { try Self.checkReuse(stored: result.requestDigest, requestDigest, id: result.id) }
        if !result.replayed { metrics.accepted.increment() }
        return Accepted(id: result.id, deviceCount: result.jobCount, replayed: result.replayed)
    }

    /// How many times a send seals to a device that registers again meanwhile before it answers `503`.
    private static let sealAttempts = 3

    /// Seals the prepared content to each device's current key, in the form of its platform.
    private func seal(
        _ prepared: PreparedContent, app: GatewayApp, sealer: Sealer, to deviceIDs: [String],
        _ byID: [String: StoredDevice], ttl: UInt64, now: UInt64, background: Bool
    ) async throws -> [NewNotification.Job] {
        // Android devices: envelopes bound to the Android application id, carried as FCM data (no placeholder).
        var fcmSealer: Sealer?
        if let index = deviceIDs.firstIndex(where: { byID[$0]!.address.platform == .fcm }) {
            guard app.fcm != nil else {
                throw GatewayAPIError(
                    .unprocessableContent, "fcmNotConfigured",
                    "devices[\(index)] is an FCM device but app \(app.id) has no FCM credentials in this gateway",
                    field: "devices[\(index)]")
            }
            fcmSealer = try await sealers.sealer(for: app, platform: .fcm, placeholder: nil)
        }
        var jobs: [NewNotification.Job] = []
        jobs.reserveCapacity(deviceIDs.count)
        for (index, deviceID) in deviceIDs.enumerated() {
            let device = byID[deviceID]!
            let key = try currentKey(of: device, index: index, now: now)
            let start = ContinuousClock.now
            let sealed: SealedNotification
            let platformSealer = device.address.platform == .fcm ? fcmSealer! : sealer
            do {
                sealed = try platformSealer.seal(prepared, to: key, ttl: ttl, now: now)
            } catch let error as SealedPushError {
                throw Self.sealingError(error, field: "devices[\(index)]")
            }
            metrics.sealSeconds.record(duration: ContinuousClock.now - start)
            let body: SealedBody
            switch device.address.platform {
            case .apns where background:
                body = try SealedBody(apnsBody: APNsPayload.encode(prefix: APNsPayload.backgroundPrefix, envelope: sealed.envelope))
            case .apns: body = try SealedBody(apnsBody: sealed.payload)
            case .fcm: body = try SealedBody(fcmEnvelopeText: Base64URL.encode(sealed.envelope))
            }
            jobs.append(
                NewNotification.Job(
                    deviceID: deviceID, body: body, messageID: Hex.encode(sealed.messageID),
                    keyID: sealed.recipientKeyID.hex))
        }
        metrics.sealed.increment(by: jobs.count)
        return jobs
    }

    /// The named devices that exist, by id: those read in the last second from ``devices``, the others from the
    /// store in one read (and kept).
    private func readDevices(appID: String, deviceIDs: [String]) async throws -> [String: StoredDevice] {
        let keys = deviceIDs.map { Self.deviceKey(appID: appID, deviceID: $0) }
        var byID: [String: StoredDevice] = [:]
        for (_, device) in devices.kept(ids: keys) { byID[device.deviceID] = device }
        let missing = deviceIDs.filter { byID[$0] == nil }
        guard !missing.isEmpty else { return byID }
        let readAt = ContinuousClock.now
        let found = try await calls.run("devices") { try await $0.devices(appID: appID, deviceIDs: missing) }
        var fresh: [String: StoredDevice] = [:]
        for device in found {
            byID[device.deviceID] = device
            fresh[Self.deviceKey(appID: appID, deviceID: device.deviceID)] = device
        }
        devices.keep(fresh, readAt: readAt)
        return byID
    }

    /// The earlier answer for an idempotency key, if the app used it with the same body.
    private func replayed(appID: String, idempotencyKey: String, requestDigest: String?) async throws -> Accepted? {
        guard
            let (id, stored) = try await calls.run(
                "idempotency", { try await $0.idempotentRequest(appID: appID, idempotencyKey: idempotencyKey) })
        else { return nil }
        try Self.checkReuse(stored: stored, requestDigest, id: id)
        let status = try await calls.run("status") { try await $0.notificationStatus(appID: appID, notificationID: id) }
        return Accepted(id: id, deviceCount: status?.deliveries.count ?? 0, replayed: true)
    }

    /// The content every envelope carries, with the size checks stated as numbers.
    private func prepare(_ content: NotificationContent, sealer: Sealer) async throws -> NotificationContent {
        var json: [UInt8]
        do {
            json = try content.canonicalJSON()
        } catch let error as SealedPushError {
            throw GatewayAPIError(.unprocessableContent, "malformedContent", error.message, field: "content")
        }
        let length = json.count
        for index in json.indices { json[index] = 0 }

        let inlineBody = Padding.paddedLength(forContentLength: length).map {
            APNsPayload.bodyLength(placeholder: sealer.placeholder, paddedPlaintextLength: $0)
        }
        if let inlineBody, inlineBody <= APNsPayload.maxBodyBytes { return content }

        guard let overflow else {
            guard let inlineBody else {
                throw GatewayAPIError(
                    .unprocessableContent, "contentTooLarge",
                    "content is \(length) bytes canonical; at most \(Padding.maxContentLength) can be sealed",
                    field: "content", needed: length, limit: Padding.maxContentLength)
            }
            throw GatewayAPIError(
                .unprocessableContent, "payloadTooLarge",
                "the APNs body would be \(inlineBody) bytes with this placeholder; the limit is "
                    + "\(APNsPayload.maxBodyBytes): shorten the content or the placeholder",
                field: "content", needed: inlineBody, limit: APNsPayload.maxBodyBytes)
        }
        guard length <= overflow.cap else {
            throw GatewayAPIError(
                .unprocessableContent, "contentTooLarge",
                "content is \(length) bytes canonical; at most \(overflow.cap) can be sent by reference",
                field: "content", needed: length, limit: overflow.cap)
        }
        do {
            let overflowSealer = try OverflowSealer(
                sealer: sealer, store: overflow.store, urlPrefix: overflow.urlPrefix, cap: overflow.cap)
            return try await overflowSealer.prepare(content).envelopeContent
        } catch let error as SealedPushError where error.code == .payloadTooLarge || error.code == .contentTooLarge {
            let smallest = APNsPayload.bodyLength(
                placeholder: sealer.placeholder, paddedPlaintextLength: Padding.paddedLength(forContentLength: 2) ?? 0)
            throw GatewayAPIError(
                .unprocessableContent, error.code.name,
                "not even a preview of the content fits the APNs budget with this placeholder (an envelope with this "
                    + "placeholder needs at least \(smallest) bytes of \(APNsPayload.maxBodyBytes))",
                field: "placeholder", needed: smallest, limit: APNsPayload.maxBodyBytes)
        } catch let error as SealedPushError {
            calls.logger.error("content blob could not be stored", metadata: ["code": "\(error.code)"])
            throw GatewayAPIError.unavailable
        }
    }

    /// The key the device registered last, unless it has expired.
    private func currentKey(of device: StoredDevice, index: Int, now: UInt64) throws -> DevicePublicKey {
        if let expiresAt = device.registration.expiresAt, expiresAt.timeIntervalSince1970 <= TimeInterval(now) {
            throw GatewayAPIError(
                .unprocessableContent, "invalidKey",
                "devices[\(index)]: its registered key \(device.registration.keyId) has expired; the device must "
                    + "register a new key", field: "devices[\(index)]")
        }
        do {
            return try DevicePublicKey(text: device.registration.publicKey)
        } catch let error as SealedPushError {
            throw GatewayAPIError(
                .unprocessableContent, "invalidKey", "devices[\(index)]: its registered key is not usable: \(error.message)",
                field: "devices[\(index)]")
        }
    }

    /// Refuses the send (`422 unknownDevice`, the first missing one's index) unless every device was found.
    private static func requireRegistered(_ deviceIDs: [String], _ byID: [String: StoredDevice]) throws {
        guard let index = deviceIDs.firstIndex(where: { byID[$0] == nil }) else { return }
        throw GatewayAPIError(
            .unprocessableContent, "unknownDevice", "devices[\(index)] is not a registered device of this app",
            field: "devices[\(index)]")
    }

    private static func sealingError(_ error: SealedPushError, field: String) -> GatewayAPIError {
        switch error.code {
        case .invalidKey:
            GatewayAPIError(.unprocessableContent, "invalidKey", error.message, field: field)
        case .malformedContent:
            GatewayAPIError(.unprocessableContent, "malformedContent", error.message, field: "content")
        case .payloadTooLarge, .contentTooLarge:
            GatewayAPIError(.unprocessableContent, error.code.name, error.message, field: "content")
        default:
            GatewayAPIError.invalid(error.message, field: field)
        }
    }

    /// A key kept with another request's digest was reused for a different notification: `422`, never a silent
    /// replay that drops the second one. A key stored without a digest (before digests were kept) replays.
    private static func checkReuse(stored: String?, _ requestDigest: String?, id: UUID) throws {
        guard let stored, let requestDigest, stored != requestDigest else { return }
        throw GatewayAPIError(
            .unprocessableContent, "idempotencyKeyReused",
            "this Idempotency-Key was used for notification \(id.lowercasedString) with a different request "
                + "body; a retry must send the same JSON, a new notification needs a new key",
            field: "header:Idempotency-Key")
    }
}
