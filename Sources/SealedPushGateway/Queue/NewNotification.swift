import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A notification to enqueue: its delivery options and one sealed body per recipient device.
public struct NewNotification: Sendable, Hashable {
    /// One recipient and the body sealed to its current key.
    public struct Job: Sendable, Hashable {
        /// The device id within the app.
        public var deviceID: String
        /// The APNs body sealed to that device.
        public var body: SealedBody
        /// The envelope's `messageId` (lowercase hex): a receipt about it names it.
        public var messageID: String?
        /// The id of the device key it is sealed to (lowercase hex): only a receipt sealed by that key is taken.
        public var keyID: String?

        /// Creates a job.
        /// - Parameters:
        ///   - deviceID: The recipient device.
        ///   - body: The sealed APNs body.
        ///   - messageID: The envelope's message id in lowercase hex (nil: receipts about it are refused).
        ///   - keyID: The device key id it is sealed to, in lowercase hex.
        public init(deviceID: String, body: SealedBody, messageID: String? = nil, keyID: String? = nil) {
            self.deviceID = deviceID
            self.body = body
            self.messageID = messageID
            self.keyID = keyID
        }
    }

    /// The notification's id (answered with `202`).
    public var id: UUID
    /// The app sending it.
    public var appID: String
    /// The `Idempotency-Key` of the request, unique per app.
    public var idempotencyKey: String?
    /// The request's digest kept with its idempotency key (``requestDigest(of:)``), so a reuse of the key with
    /// another request can be told from a retry.
    public var requestDigest: String?
    /// `apns-priority`: 1, 5 or 10.
    public var priority: Int
    /// `apns-collapse-id`, reused by every send and resend of this notification.
    public var collapseID: String?
    /// When the gateway accepted it.
    public var createdAt: Date
    /// When it stops being deliverable (`createdAt + ttl`; the envelopes' `expiresAt`).
    public var expiresAt: Date
    /// One job per recipient device (no repeats).
    public var jobs: [Job]
    /// When set, the jobs go in `claimed` under this lease instead of `queued`, and come back in
    /// ``EnqueueResult/claimed`` to be sent at once by the lease owner (jobs of unregistered devices still start
    /// `unregistered`). nil: queued, for any claim.
    public var lease: JobLease?
    /// What it is: content, an update of a notification, or a control message (kept with it, see
    /// ``NotificationKind``).
    public var kind: NotificationKind
    /// The devices the send reached only through their users and left out (they cannot be sealed to), kept with the
    /// notification for a replay of its idempotency key and its status. At most one per device the send reached.
    public var skippedDevices: [SkippedDevice]

    /// Creates a notification to enqueue.
    /// - Parameters:
    ///   - id: Its id; a new time-ordered one (``TimeOrderedUUID``) by default.
    ///   - appID: The sending app.
    ///   - idempotencyKey: The request's `Idempotency-Key`, if any.
    ///   - priority: 1, 5 or 10.
    ///   - collapseID: The `apns-collapse-id`, if any.
    ///   - createdAt: When it was accepted.
    ///   - expiresAt: When it expires.
    ///   - jobs: One sealed body per device.
    ///   - requestDigest: The request's digest, kept with the idempotency key.
    ///   - lease: Enqueue the jobs claimed under this lease (``lease``); nil: queued.
    ///   - kind: What it is (content by default).
    ///   - skippedDevices: The devices the send left out (none by default).
    public init(
        id: UUID = TimeOrderedUUID.make(), appID: String, idempotencyKey: String? = nil, priority: Int = 10,
        collapseID: String? = nil, createdAt: Date, expiresAt: Date, jobs: [Job], requestDigest: String? = nil,
        lease: JobLease? = nil, kind: NotificationKind = .content, skippedDevices: [SkippedDevice] = []
    ) {
        self.skippedDevices = skippedDevices
        self.kind = kind
        self.lease = lease
        self.id = id
        self.appID = appID
        self.idempotencyKey = idempotencyKey
        self.requestDigest = requestDigest
        self.priority = priority
        self.collapseID = collapseID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.jobs = jobs
    }

    /// Checks what both stores require before writing.
    func validate() throws {
        guard !jobs.isEmpty else {
            throw GatewayStoreError(.invalidArgument, "a notification needs at least one device", field: "devices")
        }
        var seen = Set<String>()
        for (index, job) in jobs.enumerated() where !seen.insert(job.deviceID).inserted {
            throw GatewayStoreError(.invalidArgument, "device '\(job.deviceID)' is named twice", field: "devices[\(index)]")
        }
        guard [1, 5, 10].contains(priority) else {
            throw GatewayStoreError(.invalidArgument, "priority must be 1, 5 or 10, got \(priority)", field: "priority")
        }
        guard expiresAt > createdAt else {
            throw GatewayStoreError(.invalidArgument, "expiresAt must be after createdAt", field: "ttl")
        }
        if let lease, lease.owner.isEmpty || lease.expiresAt <= createdAt {
            throw GatewayStoreError(
                .invalidArgument, "a lease needs an owner and must end after the notification's createdAt",
                field: "lease")
        }
    }
}

extension NewNotification {
    /// The digest kept with an idempotency key: SHA-256 of `body` in lowercase hex (the gateway's HTTP API passes
    /// the send body's canonical JSON, so member order and spacing do not count).
    /// - Parameter body: The request's bytes.
    /// - Returns: 64 hex digits.
    public static func requestDigest(of body: [UInt8]) -> String {
        SHA256.hash(data: body).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined()
    }
}
