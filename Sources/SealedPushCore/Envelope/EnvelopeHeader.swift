/// The 82-byte envelope header (spec §3). Its encoding is the AEAD's associated data.
public struct EnvelopeHeader: Sendable, Hashable {
    /// The version byte (1).
    public var version: UInt8
    /// The suite byte (1).
    public var suite: UInt8
    /// The key id of the device public key the envelope is sealed to.
    public var recipientKeyID: KeyID
    /// The key id of the server identity that sealed it.
    public var senderKeyID: KeyID
    /// 16 bytes, at least the last 12 random, unique per envelope (`Specs/envelope-v1.md` §3); opaque to a receiver.
    public var messageID: [UInt8]
    /// When it was sealed, in UNIX seconds.
    public var issuedAt: UInt64
    /// When it stops being valid, in UNIX seconds.
    public var expiresAt: UInt64
    /// The HPKE encapsulated key (32 bytes).
    public var enc: [UInt8]

    /// Creates a header.
    /// - Parameters:
    ///   - version: The version byte.
    ///   - suite: The suite byte.
    ///   - recipientKeyID: The device key id.
    ///   - senderKeyID: The server key id.
    ///   - messageID: 16 bytes.
    ///   - issuedAt: UNIX seconds.
    ///   - expiresAt: UNIX seconds.
    ///   - enc: 32 bytes.
    public init(
        version: UInt8 = EnvelopeV1.version, suite: UInt8 = EnvelopeV1.suiteID, recipientKeyID: KeyID,
        senderKeyID: KeyID, messageID: [UInt8], issuedAt: UInt64, expiresAt: UInt64, enc: [UInt8]
    ) {
        self.version = version
        self.suite = suite
        self.recipientKeyID = recipientKeyID
        self.senderKeyID = senderKeyID
        self.messageID = messageID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.enc = enc
    }

    /// The 82-byte wire form, used as the AEAD's associated data.
    /// - Returns: The header bytes.
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(EnvelopeV1.headerLength)
        out.append(version)
        out.append(suite)
        out.append(contentsOf: recipientKeyID.bytes)
        out.append(contentsOf: senderKeyID.bytes)
        out.append(contentsOf: messageID)
        appendUInt64(issuedAt, to: &out)
        appendUInt64(expiresAt, to: &out)
        out.append(contentsOf: enc)
        return out
    }

    /// Parses and checks the header fields of an envelope (spec §8 steps 5–7).
    /// - Parameter bytes: At least 82 bytes; only the first 82 are read.
    /// - Throws: ``SealedPushError`` with `truncated`, `unsupportedVersion`, `unsupportedSuite` or `malformedEnvelope`.
    public init(parsing bytes: ArraySlice<UInt8>) throws {
        guard bytes.count >= EnvelopeV1.headerLength else {
            throw SealedPushError(
                .truncated, "an envelope header is \(EnvelopeV1.headerLength) bytes, got \(bytes.count)")
        }
        let base = bytes.startIndex
        version = bytes[base]
        guard version == EnvelopeV1.version else {
            throw SealedPushError(.unsupportedVersion, "envelope version \(version) is not supported (this reads 1)")
        }
        suite = bytes[base + 1]
        guard suite == EnvelopeV1.suiteID else {
            throw SealedPushError(.unsupportedSuite, "envelope suite \(suite) is not supported (this reads 1)")
        }
        recipientKeyID = try KeyID(bytes: bytes[(base + 2)..<(base + 10)])
        senderKeyID = try KeyID(bytes: bytes[(base + 10)..<(base + 18)])
        messageID = Array(bytes[(base + 18)..<(base + 34)])
        issuedAt = readUInt64(bytes, at: base + 34)
        expiresAt = readUInt64(bytes, at: base + 42)
        enc = Array(bytes[(base + 50)..<(base + 82)])
        guard issuedAt <= expiresAt else {
            throw SealedPushError(
                .malformedEnvelope, "envelope expiresAt \(expiresAt) is before its issuedAt \(issuedAt)")
        }
        guard expiresAt - issuedAt <= EnvelopeV1.maxLifetime else {
            throw SealedPushError(
                .malformedEnvelope,
                "envelope lifetime \(expiresAt - issuedAt) s exceeds the limit of \(EnvelopeV1.maxLifetime) s (28 days)")
        }
    }
}

@inline(__always)
private func appendUInt64(_ value: UInt64, to out: inout [UInt8]) {
    for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
}

@inline(__always)
private func readUInt64(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt64 {
    var value: UInt64 = 0
    for position in offset..<(offset + 8) { value = value << 8 | UInt64(bytes[position]) }
    return value
}
