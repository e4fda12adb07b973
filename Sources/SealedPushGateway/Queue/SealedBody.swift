import SealedPushCore

/// An APNs JSON body that carries a sealed envelope (`Specs/envelope-v1.md` §6): the only form in which a
/// notification's content reaches the store.
///
/// The initializer checks that the body is at most 4,096 bytes, is a JSON object with an `sp` member, and that
/// `sp` decodes to a well-formed envelope header (version, suite, lengths). Content in clear — a content JSON, a
/// body without an envelope — is refused, so plaintext cannot be queued by mistake. The placeholder in `aps` is
/// fixed by configuration and never depends on the content (spec §6).
public struct SealedBody: Sendable, Hashable {
    /// The exact bytes to send to APNs.
    public let bytes: [UInt8]

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

    /// Wraps bytes read back from the store (written through ``init(apnsBody:)``), unchecked.
    init(storedBytes bytes: [UInt8]) {
        self.bytes = bytes
    }
}
