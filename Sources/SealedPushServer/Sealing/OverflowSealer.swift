import SealedPushCore

/// A ``Sealer`` that never fails for content over the APNs budget: such content is sealed as a blob in a
/// ``BlobStore`` and the envelope carries a reference plus a preview that fits (`Specs/envelope-v1.md` §4.3,
/// `Specs/blob-v1.md` §6.4).
///
/// Call ``seal(_:to:ttl:now:)`` exactly as ``Sealer/seal(_:to:ttl:now:)``: content that fits is sealed inline;
/// content that does not is stored once (encrypted under a fresh blob key, so the store never sees plaintext) and
/// every device's envelope refers to it. To seal one content for many devices, ``prepare(_:)`` once and
/// ``seal(prepared:to:ttl:now:)`` per device: the blob is then written once.
public final class OverflowSealer: Sendable {
    /// The inline sealer.
    public let sealer: Sealer
    /// Where content blobs go (served to devices at ``urlPrefix`` + name).
    public let store: any BlobStore
    /// The URL prefix under which the store's blobs are served, e.g. `https://blobs.example.com/` (the blob name
    /// is appended).
    public let urlPrefix: String
    /// The largest content JSON sent by reference (default 65,536 bytes, the receivers' default cap).
    public let cap: Int

    /// Content ready to seal for any number of devices: inline, or a preview with its stored reference.
    public struct PreparedContent: Sendable {
        /// What goes into each envelope: the content itself, or the preview with `content-ref`.
        public let envelopeContent: NotificationContent
        /// The stored blob holding the full content, when it went by reference.
        public let blobName: BlobName?
    }

    /// Creates an overflow sealer.
    ///
    /// - Parameters:
    ///   - sealer: The inline sealer (identity, topic, placeholder).
    ///   - store: Where content blobs are stored.
    ///   - urlPrefix: The URL prefix devices fetch blobs from (`http://` or `https://`).
    ///   - cap: The largest content JSON sent by reference.
    /// - Throws: `SealedPushError` with `invalidArgument` for a prefix that is not an http(s) URL or a cap of 0.
    public init(sealer: Sealer, store: any BlobStore, urlPrefix: String, cap: Int = BlobReference.defaultContentCap) throws {
        let lower = urlPrefix.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), urlPrefix.utf8.count < 1_900 else {
            throw SealedPushError(.invalidArgument, "the blob URL prefix must start with https:// or http://")
        }
        guard cap > 0 else { throw SealedPushError(.invalidArgument, "the content reference cap must be positive") }
        self.sealer = sealer
        self.store = store
        self.urlPrefix = urlPrefix
        self.cap = cap
    }

    /// Seals `content` for `device`, by reference when it does not fit the APNs budget.
    ///
    /// - Parameters:
    ///   - content: The notification content.
    ///   - device: The device's public key.
    ///   - ttl: Seconds until the envelope expires.
    ///   - now: The issue time in UNIX seconds.
    /// - Returns: The sealed notification (its body always fits).
    /// - Throws: `SealedPushError` as ``Sealer/seal(_:to:ttl:now:)``; `contentTooLarge` with the numbers when the
    ///   content is over ``cap`` even by reference; the store's errors.
    public func seal(
        _ content: NotificationContent, to device: DevicePublicKey, ttl: UInt64 = EnvelopeV1.defaultTTL,
        now: UInt64 = Sealer.currentTime()
    ) async throws -> SealedNotification {
        try seal(prepared: await prepare(content), to: device, ttl: ttl, now: now)
    }

    /// Seals prepared content for one device.
    ///
    /// - Parameters:
    ///   - prepared: From ``prepare(_:)``.
    ///   - device: The device's public key.
    ///   - ttl: Seconds until the envelope expires.
    ///   - now: The issue time in UNIX seconds.
    /// - Returns: The sealed notification.
    /// - Throws: `SealedPushError` as ``Sealer/seal(_:to:ttl:now:)``.
    public func seal(
        prepared: PreparedContent, to device: DevicePublicKey, ttl: UInt64 = EnvelopeV1.defaultTTL,
        now: UInt64 = Sealer.currentTime()
    ) throws -> SealedNotification {
        try sealer.seal(prepared.envelopeContent, to: device, ttl: ttl, now: now)
    }

    /// Decides inline or by reference and, for the latter, stores the full content once.
    ///
    /// - Parameter content: The notification content.
    /// - Returns: The content for every envelope.
    /// - Throws: `SealedPushError` with `malformedContent`, `contentTooLarge` (over ``cap`` by reference), or the
    ///   store's errors.
    public func prepare(_ content: NotificationContent) async throws -> PreparedContent {
        var json = try content.canonicalJSON()
        defer { Sodium.wipe(&json) }
        if fits(json.count) { return PreparedContent(envelopeContent: content, blobName: nil) }
        guard json.count <= cap else {
            throw SealedPushError(
                .contentTooLarge,
                "the content is \(json.count) bytes of JSON; even by reference at most \(cap) bytes are sent "
                    + "(and \(Padding.maxContentLength) inline)")
        }
        // The one copy of the plaintext is `json`, wiped on return (no second, unwiped copy for the reader).
        let stored = try await store.store(encryptor: BlobEncryptor(), bytes: json)
        let reference = try stored.encrypted.reference(url: urlPrefix + stored.name.text)
        return PreparedContent(envelopeContent: try preview(of: content, reference: reference), blobName: stored.name)
    }

    /// Whether canonical content of `length` bytes fits the envelope with this sealer's placeholder.
    private func fits(_ length: Int) -> Bool {
        guard let padded = Padding.paddedLength(forContentLength: length) else { return false }
        return APNsPayload.bodyLength(placeholder: sealer.placeholder, paddedPlaintextLength: padded)
            <= APNsPayload.maxBodyBytes
    }

    /// The preview: the small members, `content-ref`, and as much of the body (then the title) as fits, ending
    /// with "…" where cut. `data` and `attachments` travel only in the full content.
    private func preview(of content: NotificationContent, reference: BlobReference) throws -> NotificationContent {
        var preview = NotificationContent(
            title: content.title, subtitle: content.subtitle, body: nil, badge: content.badge, sound: content.sound,
            threadID: content.threadID, category: content.category, interruptionLevel: content.interruptionLevel,
            relevanceScore: content.relevanceScore, targetContentID: content.targetContentID,
            contentReference: reference.jsonValue)
        func length(_ candidate: NotificationContent) throws -> Int { try candidate.canonicalJSON().count }
        // Shorten the title first only if even an empty body does not fit.
        if let title = preview.title, !fits(try length(preview)) {
            preview.title = try longestFitting(title) { text in
                var trial = preview
                trial.title = text
                return try length(trial)
            }
        }
        if let body = content.body {
            preview.body = try longestFitting(body) { text in
                var trial = preview
                trial.body = text
                return try length(trial)
            }
        }
        guard fits(try length(preview)) else {
            throw SealedPushError(
                .payloadTooLarge, "not even a preview of the content fits the APNs budget with this placeholder")
        }
        return preview
    }

    /// The longest prefix of `text` (whole characters, "…" appended when cut) whose content still fits.
    private func longestFitting(_ text: String, length: (String) throws -> Int) throws -> String? {
        if fits(try length(text)) { return text }
        let characters = Array(text)
        var low = 0
        var high = characters.count
        while low < high {
            let middle = (low + high + 1) / 2
            if fits(try length(String(characters[0..<middle]) + "…")) { low = middle } else { high = middle - 1 }
        }
        return low == 0 ? nil : String(characters[0..<low]) + "…"
    }
}
