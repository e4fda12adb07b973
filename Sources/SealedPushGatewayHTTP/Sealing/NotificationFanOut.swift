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
        /// Devices reached through a user that could not be sealed to and got no job (`SendAccepted.skippedDevices`),
        /// kept with the notification: a replay answers the first request's. A device named directly is never
        /// skipped: the send is refused instead.
        var skipped: [SkippedDevice] = []
    }

    /// Where each recipient of a send came from, for errors that name the input at fault and for the devices a send
    /// may leave out.
    private struct Recipients {
        /// The request's `devices` (empty for the gateway's own follow-ups — withdrawal, update — whose device list
        /// is not the caller's).
        var devices: [String] = []
        /// The request's `users`.
        var users: [String] = []
        /// The recipients reached only through a user (skipped, not refused, when they cannot be sealed to), with
        /// that user.
        var throughUser: [String: String?] = [:]

        /// The request's JSON path of a recipient: `devices[i]` for a device named directly, `users[j]` for one
        /// reached through its user; none for the devices of a follow-up. Worked out only for an error.
        func field(_ deviceID: String) -> String? {
            if let user = throughUser[deviceID] {
                return user.flatMap { users.firstIndex(of: $0) }.map { "users[\($0)]" } ?? "users"
            }
            return devices.firstIndex(of: deviceID).map { "devices[\($0)]" }
        }

        /// The error's field and a description of the device for a message.
        func describe(_ deviceID: String) -> (field: String?, text: String) {
            guard let field = field(deviceID) else { return (nil, "device '\(deviceID)'") }
            return (field, "device '\(deviceID)' (\(field))")
        }
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
    ///   - senderContent: The content as the sender gave it, when the caller set members of its own (an update's
    ///     `notification-id` and `control`): a `contentTooLarge` states the sender's size and budget. Default: the
    ///     request's content.
    ///   - kind: What the notification is (kept with it: an update refuses control messages and withdrawn chains).
    ///   - replayChecked: The caller already looked the idempotency key up (``replayed(appID:idempotencyKey:requestDigest:)``)
    ///     and found no earlier request; a concurrent one that took the key since is still answered as a replay.
    /// - Returns: What the send answers; nil only with `skipMissingDevices` when no device is left.
    /// - Throws: ``GatewayAPIError`` `422 idempotencyKeyReused` when the key was used with another body.
    func send(
        appID: String, request: SendRequest, idempotencyKey: String?, requestDigest: String?,
        id: UUID = TimeOrderedUUID.make(), stampID: Bool = true, skipMissingDevices: Bool = false,
        background: Bool = false, senderContent: NotificationContent? = nil, kind: NotificationKind = .content,
        replayChecked: Bool = false
    ) async throws -> Accepted? {
        if let idempotencyKey, !replayChecked,
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
        var recipients = Recipients(devices: skipMissingDevices ? [] : request.devices, users: request.users)
        // Users: each one's sendable devices, after the devices named directly, without repeats.
        var wanted = named
        if !request.users.isEmpty {
            let users = request.users
            let usersDevices = try await calls.run("users") { try await $0.devices(appID: appID, userIDs: users) }
            for device in usersDevices where byID[device.deviceID] == nil {
                byID[device.deviceID] = device
                wanted.append(device.deviceID)
                recipients.throughUser[device.deviceID] = .some(device.userID)
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
        let envelopeContent = try await prepare(content, sender: senderContent ?? request.content, sealer: sealer)
        // Encoded and padded once for every device; only the key agreement and the AEAD run per device.
        let prepared: PreparedContent
        do {
            prepared = try sealer.prepare(envelopeContent)
        } catch let error as SealedPushError {
            throw Self.sealingError(error, field: "content")
        }

        var (jobs, skipped) = try await seal(
            prepared, app: app, sealer: sealer, to: wanted, byID, recipients, ttl: ttl, now: nowSeconds,
            background: background)
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
                requestDigest: requestDigest, lease: lease, kind: kind, skippedDevices: skipped)
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
                // The job's device, by the store's field (`devices[i]`: the i-th job, not the request's i-th device).
                let deviceID = Self.jobIndex(refused.field).flatMap { jobs.indices.contains($0) ? jobs[$0].deviceID : nil }
                guard refused.code == .deviceKeyChanged || refused.code == .unknownDevice, let deviceID else {
                    throw calls.apiError(refused, "enqueue")
                }
                let (field, device) = recipients.describe(deviceID)
                if refused.code == .unknownDevice, recipients.throughUser[deviceID] == nil {
                    // Removed since it was read: as if it had been gone before.
                    throw GatewayAPIError(
                        .unprocessableContent, "unknownDevice", "\(device) is not a registered device of this app",
                        field: field)
                }
                guard attempt < Self.sealAttempts else {
                    // Never a 503: nothing is wrong with the database, and the device's own registrations, not
                    // time, will end it.
                    calls.logger.warning(
                        "send refused: a device registered again during each of its attempts",
                        metadata: ["app": "\(appID)", "device": "\(deviceID)", "attempts": "\(attempt)"])
                    throw GatewayAPIError(
                        .conflict, "deviceKeyChanged",
                        "\(device) registered another key or platform while this send was sealed to it, "
                            + "\(attempt) times in a row; nothing was queued: send the request again (with the same "
                            + "Idempotency-Key)", field: field)
                }
            }
            attempt += 1
            forgetDevices(appID: appID, wanted)
            byID = try await readDevices(appID: appID, deviceIDs: wanted)
            // A user's device removed or marked unregistered since is left out, as if it had been gone before;
            // a device named directly must still be there.
            wanted = wanted.filter { deviceID in
                guard recipients.throughUser[deviceID] != nil else { return true }
                return byID[deviceID].map { $0.unregisteredAt == nil } ?? false
            }
            try Self.requireRegistered(wanted, byID, recipients)
            guard !wanted.isEmpty else {
                throw GatewayAPIError(
                    .unprocessableContent, "noDevices", "none of the users named has a registered device in this app",
                    field: "users")
            }
            (jobs, skipped) = try await seal(
                prepared, app: app, sealer: sealer, to: wanted, byID, recipients, ttl: ttl, now: nowSeconds,
                background: background)
        }
        if lease != nil {
            delivery?.deliver(result.claimed, reserved: jobs.count)
        } else if !result.replayed {
            delivery?.jobsQueued()
        }
        // A concurrent request took the key first: the same rule as the early check.
        if result.replayed { try Self.checkReuse(stored: result.requestDigest, requestDigest, id: result.id) }
        if !result.replayed { metrics.accepted.increment() }
        if !skipped.isEmpty, !result.replayed {
            calls.logger.notice(
                "send left out devices of its users that cannot be sealed to",
                metadata: [
                    "app": "\(appID)", "notification": "\(result.id.lowercasedString)",
                    "devices": "\(skipped.map { "\($0.deviceID) (\($0.code))" }.joined(separator: ", "))",
                ])
        }
        return Accepted(
            id: result.id, deviceCount: result.jobCount, replayed: result.replayed,
            skipped: result.replayed ? result.skippedDevices : skipped)
    }

    /// How many times a send seals to a device that registers again meanwhile before it answers
    /// `409 deviceKeyChanged`.
    private static let sealAttempts = 3

    /// The job index of a store error's field (`devices[i]`).
    private static func jobIndex(_ field: String?) -> Int? {
        guard let field, field.hasPrefix("devices["), field.hasSuffix("]") else { return nil }
        return Int(field.dropFirst("devices[".count).dropLast())
    }

    /// Seals the prepared content to each device's current key, in the form of its platform.
    ///
    /// A device that cannot be sealed to (its key expired or is unusable, or it is an FCM device of an app without
    /// FCM credentials) refuses the send when it was named directly, naming it; one reached only through its user
    /// is left out and returned as skipped, so one stale device does not keep a user's other devices from the send.
    /// When every device is left out, the send is refused (`422 noDevices`, saying why for each).
    private func seal(
        _ prepared: PreparedContent, app: GatewayApp, sealer: Sealer, to deviceIDs: [String],
        _ byID: [String: StoredDevice], _ recipients: Recipients, ttl: UInt64, now: UInt64, background: Bool
    ) async throws -> (jobs: [NewNotification.Job], skipped: [SkippedDevice]) {
        var skipped: [SkippedDevice] = []
        /// Leaves out a device reached through its user, or refuses the send for one named directly.
        func unsendable(_ deviceID: String, code: String, _ why: String) throws {
            let (field, device) = recipients.describe(deviceID)
            guard recipients.throughUser[deviceID] != nil else {
                throw GatewayAPIError(.unprocessableContent, code, "\(device): \(why)", field: field)
            }
            skipped.append(SkippedDevice(deviceID: deviceID, code: code, reason: why))
        }
        // Android devices: envelopes bound to the Android application id, carried as FCM data (no placeholder).
        var fcmSealer: Sealer?
        if app.fcm != nil, deviceIDs.contains(where: { byID[$0]!.address.platform == .fcm }) {
            fcmSealer = try await sealers.sealer(for: app, platform: .fcm, placeholder: nil)
        }
        var jobs: [NewNotification.Job] = []
        jobs.reserveCapacity(deviceIDs.count)
        for deviceID in deviceIDs {
            let device = byID[deviceID]!
            let platformSealer: Sealer
            switch device.address.platform {
            case .apns: platformSealer = sealer
            case .fcm:
                guard let fcmSealer else {
                    try unsendable(
                        deviceID, code: "fcmNotConfigured",
                        "it is an FCM device but app \(app.id) has no FCM credentials in this gateway (the operator "
                            + "adds them with `sealed-push-gateway app set-fcm`)")
                    continue
                }
                platformSealer = fcmSealer
            }
            let key: DevicePublicKey
            switch Self.currentKey(of: device, now: now) {
            case .success(let current): key = current
            case .failure(let why):
                try unsendable(deviceID, code: "invalidKey", why.reason)
                continue
            }
            let start = ContinuousClock.now
            let sealed: SealedNotification
            do {
                sealed = try platformSealer.seal(prepared, to: key, ttl: ttl, now: now)
            } catch let error as SealedPushError where error.code == .invalidKey {
                // A low-order key (registered before such keys were refused at registration).
                try unsendable(
                    deviceID, code: "invalidKey",
                    "its registered key \(key.keyID.hex) cannot be sealed to (\(error.message)); the device must "
                        + "register a new key")
                continue
            } catch let error as SealedPushError {
                throw Self.sealingError(error, field: recipients.describe(deviceID).field)
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
        if jobs.isEmpty, !skipped.isEmpty {
            let shown = skipped.prefix(5).map(\.message).joined(separator: "; ")
            let more = skipped.count > 5 ? "; and \(skipped.count - 5) more" : ""
            throw GatewayAPIError(
                .unprocessableContent, "noDevices",
                "none of the devices of the users named can be sealed to: \(shown)\(more)", field: "users")
        }
        return (jobs, skipped)
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

    /// The earlier answer for an idempotency key, if the app used it with the same body: its notification's id, job
    /// count and the devices it left out, as the first request answered them.
    func replayed(appID: String, idempotencyKey: String, requestDigest: String?) async throws -> Accepted? {
        guard
            let (id, stored) = try await calls.run(
                "idempotency", { try await $0.idempotentRequest(appID: appID, idempotencyKey: idempotencyKey) })
        else { return nil }
        try Self.checkReuse(stored: stored, requestDigest, id: id)
        let status = try await calls.run("status") { try await $0.notificationStatus(appID: appID, notificationID: id) }
        return Accepted(
            id: id, deviceCount: status?.deliveries.count ?? 0, replayed: true, skipped: status?.skippedDevices ?? [])
    }

    /// The content every envelope carries, with the size checks stated as numbers.
    ///
    /// The limits hold for the content as sealed: the sender's content with what the gateway adds to it (a send's
    /// `notification-id`, an update's `control`, attachments' descriptors). A refusal states the sender's own size
    /// (`needed`) and what is left of the limit for it (`limit`), naming what the gateway added.
    /// - Parameters:
    ///   - content: The content to seal.
    ///   - sender: The content as the sender gave it (for the numbers of a refusal).
    ///   - sealer: The app's sealer (its placeholder sets the APNs budget).
    private func prepare(
        _ content: NotificationContent, sender: NotificationContent, sealer: Sealer
    ) async throws -> NotificationContent {
        let length = try Self.canonicalLength(content)
        /// `contentTooLarge` for content over `cap` bytes as sealed.
        func tooLarge(cap: Int, _ what: String) throws -> GatewayAPIError {
            let senderLength = try Self.canonicalLength(sender)
            let added = max(0, length - senderLength)
            let budget = max(0, cap - added)
            var parts: [String] = []
            if sender.notificationID == nil, content.notificationID != nil { parts.append("its notification-id") }
            if sender.control == nil, content.control != nil { parts.append("its control") }
            if (content.attachments?.count ?? 0) > (sender.attachments?.count ?? 0) {
                parts.append("the attachments' descriptors")
            }
            let addedText =
                added == 0
                ? ""
                : " (the limit is \(cap) bytes including the \(added) the gateway adds: "
                    + "\(parts.isEmpty ? "its own members" : parts.joined(separator: " and ")))"
            return GatewayAPIError(
                .unprocessableContent, "contentTooLarge",
                "content is \(senderLength) bytes canonical; at most \(budget) can be \(what)\(addedText)",
                field: "content", needed: senderLength, limit: budget)
        }

        let inlineBody = Padding.paddedLength(forContentLength: length).map {
            APNsPayload.bodyLength(placeholder: sealer.placeholder, paddedPlaintextLength: $0)
        }
        if let inlineBody, inlineBody <= APNsPayload.maxBodyBytes { return content }

        guard let overflow else {
            guard let inlineBody else { throw try tooLarge(cap: Padding.maxContentLength, "sealed") }
            throw GatewayAPIError(
                .unprocessableContent, "payloadTooLarge",
                "the APNs body would be \(inlineBody) bytes with this placeholder; the limit is "
                    + "\(APNsPayload.maxBodyBytes): shorten the content or the placeholder",
                field: "content", needed: inlineBody, limit: APNsPayload.maxBodyBytes)
        }
        guard length <= overflow.cap else { throw try tooLarge(cap: overflow.cap, "sent by reference") }
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

    /// Why a device's key cannot be sealed to.
    private struct UnusableKey: Error {
        var reason: String
    }

    /// The length of content's canonical JSON (the copy is zeroed: it is the content in clear).
    private static func canonicalLength(_ content: NotificationContent) throws -> Int {
        var json: [UInt8]
        do {
            json = try content.canonicalJSON()
        } catch let error as SealedPushError {
            throw GatewayAPIError(.unprocessableContent, "malformedContent", error.message, field: "content")
        }
        let length = json.count
        for index in json.indices { json[index] = 0 }
        return length
    }

    /// The key the device registered last, unless it has expired (`Specs/keyring-v1.md` §4: no sealing to a key
    /// after its `expiresAt`) or cannot be read.
    private static func currentKey(of device: StoredDevice, now: UInt64) -> Result<DevicePublicKey, UnusableKey> {
        if let expiresAt = device.registration.expiresAt, expiresAt.timeIntervalSince1970 <= TimeInterval(now) {
            return .failure(
                UnusableKey(
                    reason: "its registered key \(device.registration.keyId) expired at "
                        + "\(DeviceRegistration.formatDate(expiresAt)); the device must register a new key"))
        }
        do {
            return .success(try DevicePublicKey(text: device.registration.publicKey))
        } catch let error as SealedPushError {
            return .failure(UnusableKey(reason: "its registered key is not usable: \(error.message)"))
        } catch {
            return .failure(UnusableKey(reason: "its registered key is not usable"))
        }
    }

    /// Refuses the send (`422 unknownDevice`, the first missing one's index) unless every device was found.
    private static func requireRegistered(_ deviceIDs: [String], _ byID: [String: StoredDevice]) throws {
        guard let index = deviceIDs.firstIndex(where: { byID[$0] == nil }) else { return }
        throw GatewayAPIError(
            .unprocessableContent, "unknownDevice", "devices[\(index)] is not a registered device of this app",
            field: "devices[\(index)]")
    }

    /// ``requireRegistered(_:_:)`` for a send's recipients read again, naming the device by its place in the request.
    private static func requireRegistered(
        _ deviceIDs: [String], _ byID: [String: StoredDevice], _ recipients: Recipients
    ) throws {
        guard let deviceID = deviceIDs.first(where: { byID[$0] == nil }) else { return }
        let (field, device) = recipients.describe(deviceID)
        throw GatewayAPIError(
            .unprocessableContent, "unknownDevice", "\(device) is not a registered device of this app", field: field)
    }

    private static func sealingError(_ error: SealedPushError, field: String?) -> GatewayAPIError {
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
