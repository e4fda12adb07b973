/// The constants and size arithmetic of the encrypted blob format, version 1 (`Specs/blob-v1.md` §2–3).
///
/// Core has no cryptography: the server (libsodium) and the client (swift-crypto) each seal and open chunks with
/// their own library and share only these facts about the layout.
public enum BlobFormat {
    /// The 4 magic bytes a blob starts with: ASCII `SPBL`.
    public static let magic: [UInt8] = [0x53, 0x50, 0x42, 0x4C]
    /// The version byte that follows the magic.
    public static let version: UInt8 = 1
    /// The length of the random salt in the header.
    public static let saltLength = 16
    /// The length of the header: magic, version, salt.
    public static let headerLength = 4 + 1 + 16
    /// Plaintext bytes per chunk; every chunk but the last is exactly this long.
    public static let chunkSize = 65_536
    /// The Poly1305 tag appended to every chunk.
    public static let tagLength = 16
    /// The length of a blob key and of the derived payload key.
    public static let keyLength = 32
    /// The length of a chunk nonce: an 11-byte big-endian chunk index and a last-chunk flag byte.
    public static let nonceLength = 12
    /// The HKDF-SHA256 `info` that derives the payload key from the blob key and the salt.
    public static let payloadKeyInfo: [UInt8] = Array("SealedPush blob v1 payload".utf8)
    /// The largest plaintext a version 1 blob holds: 2^32 bytes.
    public static let maxPlaintextSize = 1 << 32
    /// The most elements of a content's `attachments` (`Specs/blob-v1.md` §6.2, `MAX_ATTACHMENTS`): senders refuse a
    /// ninth; receivers process the first 8 and skip the rest with `malformedAttachment`.
    public static let maxAttachments = 8

    /// The number of chunks of a blob of `plaintextSize` bytes: `max(1, ceil(size / 65536))`.
    ///
    /// - Parameter plaintextSize: The plaintext size, 0 ... ``maxPlaintextSize``.
    /// - Returns: The chunk count (1 for the empty file).
    public static func chunkCount(plaintextSize: Int) -> Int {
        max(1, (plaintextSize + chunkSize - 1) / chunkSize)
    }

    /// The exact length of a blob of `plaintextSize` bytes: `21 + size + 16 · chunkCount`.
    ///
    /// - Parameter plaintextSize: The plaintext size, 0 ... ``maxPlaintextSize``.
    /// - Returns: The blob's length in bytes.
    public static func ciphertextSize(plaintextSize: Int) -> Int {
        headerLength + plaintextSize + tagLength * chunkCount(plaintextSize: plaintextSize)
    }

    /// The plaintext length of chunk `index` of a blob of `plaintextSize` bytes.
    ///
    /// - Parameters:
    ///   - index: The chunk index, 0 ..< ``chunkCount(plaintextSize:)``.
    ///   - plaintextSize: The plaintext size.
    /// - Returns: ``chunkSize`` for every chunk but the last; the remainder (0 only for the empty file) for the last.
    public static func chunkPlaintextLength(index: Int, plaintextSize: Int) -> Int {
        let count = chunkCount(plaintextSize: plaintextSize)
        return index < count - 1 ? chunkSize : plaintextSize - (count - 1) * chunkSize
    }

    /// Writes the nonce of chunk `index` into `nonce` (12 bytes): `uint88(index) || (isLast ? 0x01 : 0x00)`.
    ///
    /// - Parameters:
    ///   - index: The chunk index.
    ///   - isLast: Whether this is the blob's last chunk.
    ///   - nonce: At least ``nonceLength`` bytes; the first 12 are overwritten.
    public static func writeNonce(index: Int, isLast: Bool, into nonce: UnsafeMutableRawBufferPointer) {
        precondition(nonce.count >= nonceLength && index >= 0)
        for position in 0..<11 {
            let shift = 8 * (10 - position)
            nonce[position] = shift >= 64 ? 0 : UInt8(truncatingIfNeeded: UInt64(index) >> UInt64(shift))
        }
        nonce[11] = isLast ? 1 : 0
    }

    /// The nonce of chunk `index` as an array.
    ///
    /// - Parameters:
    ///   - index: The chunk index.
    ///   - isLast: Whether this is the blob's last chunk.
    /// - Returns: 12 bytes.
    public static func nonce(index: Int, isLast: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: nonceLength)
        nonce.withUnsafeMutableBytes { writeNonce(index: index, isLast: isLast, into: $0) }
        return nonce
    }
}
