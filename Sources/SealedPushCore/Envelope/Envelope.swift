/// A sealed envelope: the header and the HPKE ciphertext (spec §3).
public struct Envelope: Sendable, Hashable {
    /// The header; its encoding is the associated data.
    public var header: EnvelopeHeader
    /// The HPKE ciphertext: the padded plaintext plus the 16-byte tag.
    public var ciphertext: [UInt8]

    /// Creates an envelope from its parts.
    /// - Parameters:
    ///   - header: The header.
    ///   - ciphertext: The ciphertext.
    public init(header: EnvelopeHeader, ciphertext: [UInt8]) {
        self.header = header
        self.ciphertext = ciphertext
    }

    /// Parses envelope bytes with every structural check of spec §8 steps 4–7. Nothing is authenticated yet.
    /// - Parameter bytes: The decoded `sp` value.
    /// - Throws: ``SealedPushError`` with `truncated`, `malformedEnvelope`, `unsupportedVersion` or `unsupportedSuite`.
    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count >= EnvelopeV1.minimumLength else {
            throw SealedPushError(
                .truncated, "the envelope is \(bytes.count) bytes; the smallest valid envelope is \(EnvelopeV1.minimumLength)")
        }
        guard bytes.count <= EnvelopeV1.maximumLength else {
            throw SealedPushError(
                .malformedEnvelope, "the envelope is \(bytes.count) bytes; the limit is \(EnvelopeV1.maximumLength)")
        }
        header = try EnvelopeHeader(parsing: bytes[0..<EnvelopeV1.headerLength])
        ciphertext = Array(bytes[EnvelopeV1.headerLength...])
    }

    /// The wire form: header followed by ciphertext.
    /// - Returns: The envelope bytes.
    public func encoded() -> [UInt8] { header.encoded() + ciphertext }
}
