/// Splits an incoming blob into its header and chunks as bytes arrive, in any split (`Specs/blob-v1.md` §5).
///
/// The framer does the reader's layout work and no cryptography: it checks the magic and version byte by byte,
/// hands the salt over once the header is complete, and hands over each chunk (ciphertext and tag) the moment its
/// last byte arrives, together with its index and whether it is the last chunk. It refuses a byte beyond the
/// declared length when that byte arrives (never trusting a transport length) and reports a short stream at
/// ``finish()``. Memory is one chunk, whatever the blob size; a chunk that arrives whole in one piece is passed
/// through without a copy.
///
/// Each side opens the chunks with its own library: the client with swift-crypto, the server with libsodium.
public struct BlobFramer {
    /// The declared plaintext size.
    public let plaintextSize: Int
    /// The blob's exact length, ``BlobFormat/ciphertextSize(plaintextSize:)``.
    public let ciphertextSize: Int
    /// The number of chunks.
    public let chunkCount: Int
    /// The bytes accepted so far.
    public private(set) var received = 0
    /// The index of the chunk being filled.
    public private(set) var chunkIndex = 0

    private var header = [UInt8](repeating: 0, count: BlobFormat.headerLength)
    private var buffer: [UInt8]
    private var buffered = 0

    /// Starts reading a blob of `plaintextSize` declared bytes.
    ///
    /// - Parameters:
    ///   - plaintextSize: The declared size `S` (the descriptor's `size`).
    ///   - maxPlaintextSize: The cap for this kind of blob; ``BlobFormat/maxPlaintextSize`` applies as well.
    /// - Throws: `SealedPushError` `blobTooLarge` if the size is over a cap, `invalidArgument` if it is negative.
    public init(plaintextSize: Int, maxPlaintextSize: Int = BlobFormat.maxPlaintextSize) throws {
        guard plaintextSize >= 0 else {
            throw SealedPushError(.invalidArgument, "a blob's declared size cannot be negative (\(plaintextSize))")
        }
        let cap = min(maxPlaintextSize, BlobFormat.maxPlaintextSize)
        guard plaintextSize <= cap else {
            throw SealedPushError(
                .blobTooLarge, "the blob's declared size of \(plaintextSize) bytes is over the \(cap)-byte limit")
        }
        self.plaintextSize = plaintextSize
        self.ciphertextSize = BlobFormat.ciphertextSize(plaintextSize: plaintextSize)
        self.chunkCount = BlobFormat.chunkCount(plaintextSize: plaintextSize)
        self.buffer = [UInt8](repeating: 0, count: min(plaintextSize, BlobFormat.chunkSize) + BlobFormat.tagLength)
    }

    /// Whether every byte of the blob has arrived (and every chunk was handed over).
    public var isComplete: Bool { received == ciphertextSize }

    /// Accepts the next bytes of the stream.
    ///
    /// - Parameters:
    ///   - bytes: The next bytes, any length (including none).
    ///   - onHeader: Called once, when the header is complete, with the 16-byte salt.
    ///   - onChunk: Called for each complete chunk, in order, with its index, whether it is the last chunk, and its
    ///     ciphertext and tag (valid only during the call). Its error is rethrown as is.
    /// - Throws: `malformedBlob`, `unsupportedBlobVersion` or `blobTrailingData` (after every chunk before the
    ///   offending byte was handed over), or what a closure throws.
    public mutating func consume(
        _ bytes: UnsafeRawBufferPointer,
        onHeader: (_ salt: UnsafeRawBufferPointer) throws -> Void,
        onChunk: (_ index: Int, _ isLast: Bool, _ sealed: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let usable = min(bytes.count, ciphertextSize - received)
        var offset = 0
        while offset < usable {
            if received < BlobFormat.headerLength {
                let byte = bytes[offset]
                if received < 4, byte != BlobFormat.magic[received] {
                    throw SealedPushError(.malformedBlob, "the data is not a SealedPush blob (wrong magic at byte \(received))")
                }
                if received == 4, byte != BlobFormat.version {
                    throw SealedPushError(
                        .unsupportedBlobVersion, "blob version \(byte) is not supported (this reader reads version 1)")
                }
                header[received] = byte
                received += 1
                offset += 1
                if received == BlobFormat.headerLength {
                    try header.withUnsafeBytes { try onHeader(UnsafeRawBufferPointer(rebasing: $0[5...])) }
                }
                continue
            }
            let isLast = chunkIndex == chunkCount - 1
            let chunkLength = BlobFormat.chunkPlaintextLength(index: chunkIndex, plaintextSize: plaintextSize)
                + BlobFormat.tagLength
            let take = min(chunkLength - buffered, usable - offset)
            if buffered == 0, take == chunkLength {
                // The whole chunk is in this piece: no copy.
                try onChunk(chunkIndex, isLast, UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + take]))
            } else {
                buffer.withUnsafeMutableBytes { target in
                    UnsafeMutableRawBufferPointer(rebasing: target[buffered..<buffered + take])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + take]))
                }
                buffered += take
                if buffered == chunkLength {
                    try buffer.withUnsafeBytes {
                        try onChunk(chunkIndex, isLast, UnsafeRawBufferPointer(rebasing: $0[0..<chunkLength]))
                    }
                    buffered = 0
                } else {
                    received += take
                    offset += take
                    continue
                }
            }
            received += take
            offset += take
            chunkIndex += 1
        }
        if bytes.count > usable {
            throw SealedPushError(
                .blobTrailingData,
                "the blob continues after its last chunk (declared \(plaintextSize) bytes, \(ciphertextSize) bytes of blob)")
        }
    }

    /// Ends the stream.
    ///
    /// - Throws: `blobTruncated` if fewer than ``ciphertextSize`` bytes arrived.
    public func finish() throws {
        guard received == ciphertextSize else {
            let place = received < BlobFormat.headerLength ? "in the header" : "in chunk \(chunkIndex) of \(chunkCount)"
            throw SealedPushError(
                .blobTruncated,
                "the blob ended \(place) after \(received) of \(ciphertextSize) bytes (declared size \(plaintextSize))")
        }
    }
}
