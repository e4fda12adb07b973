import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// `POST /v1/apps/{appId}/receipts`: sealed receipts from devices (`Specs/control-v1.md` §4), taken without an API
/// key — the HPKE sender authentication is the credential: only the key a device registered opens its receipts.
///
/// Built to face the internet: the body is read up to one receipt's exact length (354 bytes) and no further; the
/// header is checked before any lookup, the device key before any cryptography; an answer is a bare `204`, `400` for
/// a body that is not a receipt at all, `429`, or one and the same `422 receiptRefused` for everything else (unknown
/// app or device key, forged, expired, replayed, about a notification the device was not sent), so no answer tells
/// anything about other apps or devices. Only the fields the contract names are stored; nothing is logged from a
/// receipt.
///
/// Two rate limits, neither of which depends on whether the key a receipt names is registered (so a `429` tells
/// nothing about it either): each client address has a bucket of refused receipts, taken from before the receipt is
/// looked at and given back when it counts — the bound on the work (store reads, X25519) one client makes the gateway
/// do for receipts that do not count; and each device key has its bucket of receipts, charged only for receipts that
/// opened, so only the device itself (the holder of its private key) can use up its allowance.
struct ReceiptIntake: Sendable {
    let calls: StoreCalls
    let openers: AppReceiptOpeners
    let limiter: AppRateLimiter
    let metrics: GatewayMetrics
    let clock: @Sendable () -> Date
    /// Forwards each job's first receipt to the backend, signed (the gateway's webhook), if configured.
    let webhook: UnregisteredWebhook?
    /// What opening a device's receipts needs — its app and its public key — by app and key id, read from the store
    /// at most once every 30 s per key, so a device posting receipts one after another costs one store call each (the
    /// record), not three. A device removed or re-keyed meanwhile may still have its receipts opened; they are
    /// recorded only against jobs sealed to that very key, so nothing is recorded that the device did not receive.
    let senders = RecentlyRead<Sender>(lifetime: .seconds(30), capacity: 50_000)

    /// The app and the registered device a receipt names by key id, with the device's public key parsed once.
    struct Sender: Sendable {
        var app: GatewayApp
        var device: StoredDevice
        /// The device's X25519 public key (nil if the stored text does not parse: no receipt of it opens).
        var publicKey: [UInt8]?
    }
    /// Receipts recorded in groups: those that arrive while a batch is written go in the next one transaction.
    let records: GroupCommit<ReceivedReceipt, ReceiptRecording>

    /// The most receipts recorded in one transaction.
    static let maxBatch = 128

    init(
        calls: StoreCalls, openers: AppReceiptOpeners, limiter: AppRateLimiter, metrics: GatewayMetrics,
        clock: @escaping @Sendable () -> Date, webhook: UnregisteredWebhook?
    ) {
        self.calls = calls
        self.openers = openers
        self.limiter = limiter
        self.metrics = metrics
        self.clock = clock
        self.webhook = webhook
        self.records = GroupCommit(
            maxBatch: Self.maxBatch, metrics: GroupCommitMetrics(write: "receipt", factory: metrics.factory)
        ) { batch in
            try await calls.run("recordReceipts", { try await $0.recordReceipts(batch) })
        }
    }

    /// The one answer of every receipt that does not count.
    static let refused = GatewayAPIError(
        .unprocessableContent, "receiptRefused",
        "the receipt was refused: it must be a new receipt, sealed by a device key registered in this app, about a "
            + "notification this gateway sent to that key (Specs/control-v1.md §4)")

    /// The app and the registered device of this key id: from ``senders`` while fresh (unless `fresh`), else from
    /// the store.
    private func sender(appID: String, keyID: String, fresh: Bool = false) async throws -> Sender? {
        try await senders.record(id: appID + "/" + keyID, refresh: fresh) {
            guard let device = try await calls.run("device by key", { try await $0.device(appID: appID, keyID: keyID) }),
                let app = try await calls.run("app", { try await $0.app(id: appID) })
            else { return nil }
            return Sender(
                app: app, device: device,
                publicKey: try? DevicePublicKey(text: device.registration.publicKey).rawRepresentation)
        }
    }

    /// Opens and records one receipt.
    /// - Parameters:
    ///   - appID: The app of the path.
    ///   - bytes: The request body.
    ///   - client: The address of the client that posted it (its refused receipts are limited).
    /// - Throws: ``GatewayAPIError``: `malformedRequest` (400), `rateLimited` (429), ``refused`` (422), or
    ///   `unavailable` (503) when the store or the app's identity fails.
    func take(appID: String, bytes: [UInt8], client: String) async throws {
        guard bytes.count == DeliveryReceipt.maximumEnvelopeLength,
            let header = try? EnvelopeHeader(parsing: bytes[0..<EnvelopeV1.headerLength])
        else {
            metrics.recordReceiptRefused(cause: "malformed")
            throw GatewayAPIError.malformed(
                "a receipt is one envelope of exactly \(DeliveryReceipt.maximumEnvelopeLength) bytes with a version 1 "
                    + "header (Specs/control-v1.md §4), sent as application/octet-stream; got \(bytes.count) bytes",
                field: "body")
        }
        // A token of the client's refused receipts, before anything is looked up: kept when the receipt does not
        // count, given back when it does (or when the gateway, not the receipt, failed).
        if let wait = limiter.admitRefusedReceipt(client: client) {
            throw rateLimited(
                "this client posted too many receipts that were refused (rateLimits.refusedReceiptsPerSecondPerClient)",
                wait: wait)
        }
        var refusedHere = false
        defer { if !refusedHere { limiter.giveBackRefusedReceipt(client: client) } }
        do {
            try await open(appID: appID, bytes: bytes, header: header)
        } catch let error as GatewayAPIError where error.code == Self.refused.code {
            refusedHere = true
            throw error
        }
    }

    /// A `429 rateLimited` with `Retry-After`, counted as a refused receipt.
    private func rateLimited(_ what: String, wait: Int) -> GatewayAPIError {
        metrics.recordReceiptRefused(cause: "rateLimited")
        var error = GatewayAPIError(.tooManyRequests, "rateLimited", "\(what); retry after \(wait) s")
        error.retryAfter = wait
        return error
    }

    /// ``take(appID:bytes:client:)`` after the client's refused-receipt token was taken.
    private func open(appID: String, bytes: [UInt8], header: EnvelopeHeader) async throws {
        let keyID = header.senderKeyID.hex
        guard Identifier.isValid(appID), var sender = try await sender(appID: appID, keyID: keyID) else {
            metrics.recordReceiptRefused(cause: "unknownSender")
            throw Self.refused
        }
        var opener = try await openers.opener(
            for: sender.app, platform: sender.device.address.platform, recipientKeyID: header.recipientKeyID)
        if opener == nil {
            // Sealed to an identity the kept app record does not know: the app may have rotated since it was read.
            guard let current = try await self.sender(appID: appID, keyID: keyID, fresh: true) else {
                metrics.recordReceiptRefused(cause: "unknownSender")
                throw Self.refused
            }
            sender = current
            opener = try await openers.opener(
                for: sender.app, platform: sender.device.address.platform, recipientKeyID: header.recipientKeyID)
        }
        guard let opener else {
            metrics.recordReceiptRefused(cause: "unknownServerKey")
            throw Self.refused
        }
        let publicKey = sender.publicKey
        let now = clock()
        let opened: OpenedReceipt
        do {
            opened = try opener.open(
                bytes, devicePublicKey: { $0 == header.senderKeyID ? publicKey : nil },
                now: UInt64(max(0, now.timeIntervalSince1970.rounded(.down))))
        } catch {
            metrics.recordReceiptRefused(cause: "notOpened")
            throw Self.refused
        }
        // Opened: sealed by the device's own key, so this is the device's allowance to use up, no one else's.
        if let wait = limiter.admitReceipt(appID: appID, keyID: keyID) {
            throw rateLimited("this device key is over its receipt rate limit (rateLimits.receiptsPerSecondPerDevice)", wait: wait)
        }
        let receipt = opened.receipt
        let (outcome, reason): (String, String?) =
            switch receipt.outcome {
            case .decrypted: ("decrypted", nil)
            case .duplicate: ("duplicate", nil)
            case .fallback(let reason): ("fallback", reason)
            }
        let record = ReceivedReceipt(
            appID: appID, keyID: keyID, receiptID: Hex.encode(opened.receiptID),
            receiptExpiresAt: Date(timeIntervalSince1970: TimeInterval(opened.expiresAt)),
            messageID: Hex.encode(receipt.messageID), outcome: outcome, reason: reason,
            attachmentsDelivered: receipt.attachmentsDelivered, attachmentsFailed: receipt.attachmentsFailed,
            deviceTime: Date(timeIntervalSince1970: TimeInterval(receipt.deviceTime)), receivedAt: now,
            forwardsToWebhook: webhook?.usesOutbox ?? false)
        switch try await records.submit(record) {
        case .recorded(let notificationID, let deviceID, let first):
            metrics.recordReceipt(outcome: outcome, reason: reason)
            if first, let webhook, webhook.usesOutbox {
                webhook.outboxWritten()  // the store wrote the event with the receipt
            } else if first {
                webhook?.notify(
                    ReceiptEvent(
                        appID: appID, notificationID: notificationID, deviceID: deviceID, outcome: outcome,
                        reason: reason, attachmentsDelivered: record.attachmentsDelivered,
                        attachmentsFailed: record.attachmentsFailed, deviceTime: record.deviceTime, receivedAt: now))
            }
        case .replayed:
            metrics.recordReceiptRefused(cause: "replayed")
            throw Self.refused
        case .unknownMessage:
            metrics.recordReceiptRefused(cause: "unknownMessage")
            throw Self.refused
        case .limitReached:
            metrics.recordReceiptRefused(cause: "limitReached")
            throw Self.refused
        }
    }
}
