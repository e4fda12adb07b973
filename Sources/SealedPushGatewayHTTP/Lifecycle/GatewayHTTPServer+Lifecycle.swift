import Foundation
import HTTPTypes
import Hummingbird
import SealedPushCore
import SealedPushGateway

/// The notification lifecycle (`Specs/control-v1.md`, issue 20 §3): withdraw, update and badge, each sealed per
/// device like any content, and the receipts devices seal back.
extension GatewayHTTPServer {
    /// `DELETE …/notifications/{id}[?carrier=background]`: jobs not yet sent end `withdrawn`; the devices that got it
    /// (or may have: a worker held the job) get a sealed `remove` of its notification id, as an alert push or (with
    /// `carrier=background`) a background push at priority 5. Idempotent: a repeat withdraws nothing more and
    /// answers the same removal (its idempotency key is the notification's).
    func withdrawNotification(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await authorizedApp(request, context)
        let id = try notificationID(context)
        try admitSend(appID: appID)
        let background = try Carrier.isBackground(
            request.uri.queryParameters.get("carrier").map { String($0) }, field: "query:carrier")
        let now = clock()
        guard let withdrawal = try await calls.run("withdraw", { try await $0.withdraw(appID: appID, notificationID: id, now: now) })
        else { throw GatewayAPIError.notFound("no such notification in this app") }
        if !withdrawal.alreadyWithdrawn { metrics.recordWithdrawal(jobs: withdrawal.withdrawnNow) }
        let idText = id.uuidString.lowercased()
        var removal: NotificationFanOut.Accepted?
        if !withdrawal.reachedDevices.isEmpty {
            let content = NotificationContent(control: try NotificationControl.remove(ids: [idText]))
            let send = SendRequest(
                devices: withdrawal.reachedDevices, users: [], content: content, ttl: SendRequest.defaultTTL,
                priority: background ? 5 : 10)
            // A space never appears in a client's Idempotency-Key: this key is the gateway's own (the first call's
            // carrier stays the removal's).
            removal = try await fanOut.send(
                appID: appID, request: send, idempotencyKey: "sealedpush withdraw \(idText)", requestDigest: nil,
                stampID: false, skipMissingDevices: true, background: background, kind: .remove)
        }
        return try JSONResponse.make(
            .ok,
            WithdrawnModel(
                id: idText, withdrawnJobs: withdrawal.withdrawnNow, reachedDevices: withdrawal.reachedDevices.count,
                removalId: removal?.id.uuidString.lowercased()))
    }

    /// `POST …/notifications/{id}/update`: new content sealed per device as an `update` of the notification (same
    /// collapse id, `notification-id` and `control.id` its id), to each device whose job is queued or sent.
    ///
    /// An update of an update updates the same notification (its `notification-id` and `control.id` are that
    /// notification's, so a later withdrawal removes what it showed). Refused: anything of a withdrawn notification
    /// — the notification itself, or an update of it — with `409 notificationWithdrawn`; a control message (a
    /// withdrawal's removal, a badge), which shows nothing to replace, with `409 notUpdatable`. A retry with the
    /// `Idempotency-Key` of an accepted update is answered as its replay before any of these checks.
    func updateNotification(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await authorizedApp(request, context)
        let id = try notificationID(context)
        let idempotencyKey = try Self.idempotencyKey(request)
        if idempotencyKey == nil { try admitSend(appID: appID) }
        var body = try await RequestBodyReader.read(request, limit: configuration.maxBodyBytes)
        defer { for index in body.indices { body[index] = 0 } }  // the content in clear, as it arrived
        var update = try SendRequest(body: body, update: true)
        let pathID = id.uuidString.lowercased()
        let digest = idempotencyKey.map { _ in
            NewNotification.requestDigest(of: Array("update \(pathID) \(Self.requestDigest(body))".utf8))
        }
        if let earlier = try await replayOrAdmit(appID: appID, idempotencyKey: idempotencyKey, requestDigest: digest) {
            return self.accepted(earlier, appID: appID)
        }
        guard let status = try await calls.run("status", { try await $0.notificationStatus(appID: appID, notificationID: id) })
        else { throw GatewayAPIError.notFound("no such notification in this app") }
        let target = try await updateTarget(of: status, appID: appID)
        let idText = target.uuidString.lowercased()
        let senderContent = update.content
        update.devices = status.deliveries.filter { [.queued, .claimed, .sent].contains($0.state) }.map(\.deviceID)
        update.collapseID = status.collapseID
        update.content.notificationID = idText
        update.content.control = try NotificationControl.update(id: idText)
        let nothing = GatewayAPIError(
            .conflict, "nothingToUpdate",
            "no device of the notification can take an update (every job failed, expired or was unregistered)")
        guard !update.devices.isEmpty else { throw nothing }
        guard
            let accepted = try await fanOut.send(
                appID: appID, request: update, idempotencyKey: idempotencyKey, requestDigest: digest, stampID: false,
                skipMissingDevices: true, senderContent: senderContent, kind: .update(of: target), replayChecked: true)
        else { throw nothing }
        return self.accepted(accepted, appID: appID)
    }

    /// The notification with content that an update of `status` replaces: itself, or the one it updates when it is
    /// an update.
    /// - Throws: ``GatewayAPIError`` `409 notificationWithdrawn` when it or the notification it updates was
    ///   withdrawn; `409 notUpdatable` for a control message (a removal or a badge).
    private func updateTarget(of status: NotificationStatus, appID: String) async throws -> UUID {
        let withdrawn = GatewayAPIError(
            .conflict, "notificationWithdrawn", "the notification was withdrawn; send a new one instead")
        switch status.kind {
        case .remove, .badge:
            let what = status.kind == .remove ? "the removal a withdrawal sent" : "a badge message"
            throw GatewayAPIError(
                .conflict, "notUpdatable",
                "notification \(status.id.uuidString.lowercased()) is \(what): a control message that shows nothing, "
                    + "so there is no content to replace; update the notification that was sent with content")
        case .content:
            guard status.withdrawnAt == nil else { throw withdrawn }
            return status.id
        case .update(let original):
            guard status.withdrawnAt == nil else { throw withdrawn }
            let first = try await calls.run("status") { try await $0.notificationStatus(appID: appID, notificationID: original) }
            // One already purged (past its expiry and the retention) can no longer be withdrawn either.
            if let first, first.withdrawnAt != nil {
                throw GatewayAPIError(
                    .conflict, "notificationWithdrawn",
                    "this is an update of notification \(original.uuidString.lowercased()), which was withdrawn; send a "
                        + "new one instead")
            }
            return original
        }
    }

    /// `POST …/badge`: a sealed `badge` message setting the count on the devices and users named.
    func setBadge(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await authorizedApp(request, context)
        let idempotencyKey = try Self.idempotencyKey(request)
        if idempotencyKey == nil { try admitSend(appID: appID) }
        let body = try await RequestBodyReader.read(request, limit: configuration.maxBodyBytes)
        let badge = try BadgeRequest(body: body)
        let send = SendRequest(
            devices: badge.devices, users: badge.users,
            content: NotificationContent(control: try NotificationControl.badge(count: badge.count)), ttl: badge.ttl,
            priority: badge.priority)
        let digest = idempotencyKey.map { _ in
            NewNotification.requestDigest(of: Array("badge \(Self.requestDigest(body))".utf8))
        }
        if let earlier = try await replayOrAdmit(appID: appID, idempotencyKey: idempotencyKey, requestDigest: digest) {
            return self.accepted(earlier, appID: appID)
        }
        guard
            let accepted = try await fanOut.send(
                appID: appID, request: send, idempotencyKey: idempotencyKey, requestDigest: digest, stampID: false,
                background: badge.background, kind: .badge, replayChecked: true)
        else { throw GatewayAPIError.unavailable }  // not reached: only skipMissingDevices answers nil
        return self.accepted(accepted, appID: appID)
    }

    /// `POST …/receipts`: no API key (see ``ReceiptIntake``); `204` once recorded.
    func takeReceipt(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = context.pathID("appId") ?? ""
        let body = try await RequestBodyReader.read(
            request, limit: DeliveryReceipt.maximumEnvelopeLength,
            limitText: "a receipt's fixed size of \(DeliveryReceipt.maximumEnvelopeLength) bytes (one receipt envelope, "
                + "Specs/control-v1.md §4)")
        try await receipts.take(appID: appID, bytes: body, client: context.clientAddress)
        return Response(status: .noContent)
    }

    /// The notification id of the path.
    func notificationID(_ context: GatewayRequestContext) throws -> UUID {
        guard let text = context.pathID("notificationId"), let id = UUID(uuidString: text) else {
            throw GatewayAPIError.notFound("no such notification in this app (an id is a UUID)")
        }
        return id
    }

    /// `202` with the contract's `SendAccepted` and the new notification's `Location`.
    func accepted(_ accepted: NotificationFanOut.Accepted, appID: String) -> Response {
        let id = accepted.id.lowercasedString
        var headers: HTTPFields = [.location: "/v1/apps/\(appID)/notifications/\(id)"]
        if accepted.replayed { headers[Self.idempotentReplayed] = "true" }
        headers[.contentType] = "application/json"
        let body = SendAcceptedModel(
            id: id, devices: accepted.deviceCount, skippedDevices: SkippedDeviceModel.list(accepted.skipped)
        ).json
        return Response(status: .accepted, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
