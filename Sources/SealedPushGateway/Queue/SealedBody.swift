import SealedPushCore

/// A sealed envelope in the form its platform carries it — an APNs JSON body (`Specs/envelope-v1.md` §6), or the
/// envelope text of an FCM message's `data` (`Specs/fcm-v1.md`) — the only form in which a notification's content
/// reaches the store.
///
/// The initializers check the shape: an APNs body is at most 4,096 bytes, a JSON object with an `sp` member; an FCM
/// body is the base64url envelope text within the FCM data budget; either way the envelope must decode to a
/// well-formed header (version, suite, lengths). Content in clear — a content JSON, a body without an envelope — is
/// refused, so plaintext cannot be queued by mistake. The placeholder in `aps` is fixed by configuration and never
/// depends on the content (spec §6); an FCM message has none.
public struct SealedBody: Sendable, Hashable {
    /// The exact bytes: the APNs body, or the FCM envelope text (ASCII).
    public let bytes: [UInt8]

    /// Which platform's form the bytes are in (an APNs body is a JSON object; an envelope text never starts with
    /// `{`).
    public var platform: PushPlatform { bytes.first == UInt8(ascii: "{") ? .apns : .fcm }

    /// Wraps a sealed APNs body after checking its shape.
    /// - Parameter bytes: The body `Sealer.seal` produced (`SealedNotification.payload`).
    /// - Throws: ``GatewayStoreError`` with code `invalidArgument` naming what is missing.
    public init(apnsBody bytes: [UInt8]) throws {
        let envelope: [UInt8]
        do {
            envelope = try APNsPayload.extractEnvelope(fromBody: bytes)
            _ = try Envelope(parsing: envelope)
        } catch let error as SealedPushError {
            throw GatewayStoreError(
                .invalidArgument, "a job body must be a sealed APNs body (envelope spec §6): \(error.code): \(error.message)")
        }
        self.bytes = bytes
    }

    /// Wraps the envelope text of an FCM message's `data` (`sp`) after checking it.
    /// - Parameter envelopeText: The base64url envelope (`SealedNotification.envelope`, encoded).
    /// - Throws: ``GatewayStoreError`` with code `invalidArgument` naming what is wrong.
    public init(fcmEnvelopeText envelopeText: String) throws {
        let bytes = Array(envelopeText.utf8)
        guard !bytes.isEmpty, bytes.count <= FCMPayload.maxEnvelopeTextLength, bytes.first != UInt8(ascii: "{") else {
            throw GatewayStoreError(
                .invalidArgument,
                "an FCM job body must be an envelope's base64url text of 1 to \(FCMPayload.maxEnvelopeTextLength) bytes (fcm-v1)")
        }
        do {
            _ = try Envelope(parsing: try FCMPayload.extractEnvelope(fromData: [FCMPayload.envelopeKey: envelopeText]))
        } catch let error as SealedPushError {
            throw GatewayStoreError(
                .invalidArgument, "an FCM job body must be a sealed envelope (fcm-v1): \(error.code): \(error.message)")
        }
        self.bytes = bytes
    }

    /// The FCM envelope text (for an FCM body).
    public var envelopeText: String { String(decoding: bytes, as: UTF8.self) }

    /// Wraps bytes read back from the store (written through ``init(apnsBody:)``), unchecked.
    init(storedBytes bytes: [UInt8]) {
        self.bytes = bytes
    }
}
