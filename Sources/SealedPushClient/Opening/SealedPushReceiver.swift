#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// The device's complete receive path: load the key ring read-only, open the envelope (spec §8 steps 1–12) and
/// record its message id in the replay guard (step 13).
///
/// This is what the notification service extension (through ``NotificationServiceStep``) and `sealed-push open
/// --keyring` use. The key ring is read on every call and never created, rotated or rewritten here; when it cannot
/// be read the call fails with `keysUnavailable` and nothing is written anywhere.
public struct SealedPushReceiver: Sendable {
    /// Where the device keys come from (used read-only).
    public let keyStore: any KeyStore
    /// The replay guard, or nil to skip step 13.
    public let replayGuard: (any ReplayGuard)?
    /// The APNs topic (bundle id).
    public let topic: String
    /// The clock giving "now".
    public let clock: SealedPushClock
    private let serverPublicKeys: [[UInt8]]

    /// Creates a receiver.
    ///
    /// - Parameters:
    ///   - keyStore: The device key store; only ``KeyStore/loadKeyRing()`` is called.
    ///   - replayGuard: The replay guard, or nil for none.
    ///   - serverPublicKeys: Raw 32-byte X25519 public keys of the pinned server identities (picked by the
    ///     envelope's sender key id, so the server identity can rotate).
    ///   - topic: The APNs topic (bundle id).
    ///   - clock: The source of "now".
    /// - Throws: `SealedPushError` with code `invalidKey` (no server key, or one not 32 bytes) or `invalidTopic`.
    public init(
        keyStore: any KeyStore,
        replayGuard: (any ReplayGuard)?,
        serverPublicKeys: [[UInt8]],
        topic: String,
        clock: SealedPushClock = .system
    ) throws {
        _ = try EnvelopeV1.hpkeInfo(topic: topic)
        guard !serverPublicKeys.isEmpty else {
            throw SealedPushError(.invalidKey, "no pinned server public key given")
        }
        for key in serverPublicKeys where key.count != 32 {
            throw SealedPushError(.invalidKey, "a server public key is 32 bytes, got \(key.count)")
        }
        self.keyStore = keyStore
        self.replayGuard = replayGuard
        self.serverPublicKeys = serverPublicKeys
        self.topic = topic
        self.clock = clock
    }

    /// Creates a receiver over a key ring directory: a read-only ``FileKeyStore`` and a ``FileReplayGuard`` in the
    /// same directory. This is the extension's (and `sealed-push open --keyring DIR`'s) configuration.
    ///
    /// - Parameters:
    ///   - directory: The key ring directory created by ``DeviceKeyManager``.
    ///   - serverPublicKeys: Raw 32-byte X25519 public keys of the pinned server identities.
    ///   - topic: The APNs topic (bundle id).
    ///   - clock: The source of "now".
    ///   - duplicateWindow: The replay guard's duplicate window in seconds (default 600; 0 for none,
    ///     `Specs/keyring-v1.md` §5.5).
    ///   - replayJournalLimit: The replay guard's journal length at which it compacts (default 1,024,
    ///     `Specs/keyring-v1.md` §5.4.3).
    /// - Throws: `SealedPushError` with code `invalidKey` or `invalidTopic`.
    public init(
        directory: URL,
        serverPublicKeys: [[UInt8]],
        topic: String,
        clock: SealedPushClock = .system,
        duplicateWindow: UInt64 = FileReplayGuard.defaultDuplicateWindow,
        replayJournalLimit: Int = FileReplayGuard.defaultJournalLimit
    ) throws {
        try self.init(
            keyStore: FileKeyStore(directory: directory, access: .readOnly),
            replayGuard: FileReplayGuard(
                directory: directory, duplicateWindow: duplicateWindow, journalLimit: replayJournalLimit),
            serverPublicKeys: serverPublicKeys,
            topic: topic,
            clock: clock
        )
    }

    /// Opens an APNs JSON body.
    ///
    /// - Parameter body: The raw APNs JSON body.
    /// - Returns: The opened notification.
    /// - Throws: `SealedPushError`: the codes of ``EnvelopeOpener/open(body:now:)``, then `keysUnavailable` /
    ///   `keyStoreCorrupt` (key ring), `replayed` or the replay guard's codes. An exact copy of an envelope opened
    ///   within the guard's duplicate window is not an error: it opens with ``OpenedNotification/replayVerdict``
    ///   ``ReplayVerdict/duplicate(firstAcceptedAt:)``.
    public func open(body: [UInt8]) throws -> OpenedNotification {
        try open(envelope: APNsPayload.extractEnvelope(fromBody: body))
    }

    /// Opens the envelope in a notification's `userInfo`.
    ///
    /// - Parameter userInfo: The notification's `userInfo`.
    /// - Returns: The opened notification.
    /// - Throws: `SealedPushError` as ``open(body:)``, except `payloadTooLarge`.
    public func open(userInfo: [AnyHashable: Any]) throws -> OpenedNotification {
        try open(envelope: APNsPayload.extractEnvelope(fromUserInfo: userInfo))
    }

    /// Opens binary envelope bytes (already base64url-decoded).
    ///
    /// - Parameter envelope: The envelope bytes.
    /// - Returns: The opened notification.
    /// - Throws: `SealedPushError` as ``open(body:)`` from step 4 on.
    public func open(envelope: [UInt8]) throws -> OpenedNotification {
        // Steps 4-7 need no key: report them in spec order before touching the key store.
        _ = try Envelope(parsing: envelope)
        guard let ring = try keyStore.loadKeyRing() else {
            throw SealedPushError(.keysUnavailable, "no device key ring exists")
        }
        let opener = try EnvelopeOpener(keyRing: ring, serverPublicKeys: serverPublicKeys, topic: topic)
        let now = clock.now()
        let opened = try opener.open(envelope: envelope, now: now)
        // Step 13, only after steps 11 and 12 succeeded.
        guard let replayGuard else { return opened }
        let verdict = try replayGuard.checkAndRecord(
            messageID: opened.messageID, envelopeDigest: EnvelopeDigest.of(envelope), issuedAt: opened.issuedAt,
            expiresAt: opened.expiresAt, now: now)
        return OpenedNotification(
            content: opened.content, messageID: opened.messageID, issuedAt: opened.issuedAt,
            expiresAt: opened.expiresAt, recipientKeyID: opened.recipientKeyID, senderKeyID: opened.senderKeyID,
            replayVerdict: verdict)
    }
}
