import SealedPushCore

/// Reads a blob on the server side (libsodium): the reader of `Specs/blob-v1.md` §5, for checking stored blobs
/// and for the conformance tests against blobs the client side made.
///
/// Feed bytes as they come (any split); each chunk is verified when its last byte arrives and only then handed
/// to `output`. The client has its own reader on swift-crypto.
public final class BlobDecryptor {
    private var framer: BlobFramer
    private let blobKey: SecretBytes
    private var payloadKey: SecretBytes?
    private var plaintext: [UInt8]
    private var failed = false

    /// Starts reading a blob.
    ///
    /// - Parameters:
    ///   - key: The 32-byte blob key.
    ///   - plaintextSize: The declared size (the descriptor's `size`).
    ///   - maxPlaintextSize: The cap; a larger declared size fails at once.
    /// - Throws: `invalidKey` for a key of the wrong length, `blobTooLarge` for a size over the cap.
    public init(key: [UInt8], plaintextSize: Int, maxPlaintextSize: Int = BlobFormat.maxPlaintextSize) throws {
        guard key.count == BlobFormat.keyLength else {
            throw SealedPushError(.invalidKey, "a blob key is 32 bytes, got \(key.count)")
        }
        framer = try BlobFramer(plaintextSize: plaintextSize, maxPlaintextSize: maxPlaintextSize)
        blobKey = SecretBytes(copying: key)
        plaintext = [UInt8](repeating: 0, count: min(plaintextSize, BlobFormat.chunkSize))
    }

    deinit { Sodium.wipe(&plaintext) }

    /// Accepts the next bytes of the blob.
    ///
    /// - Parameters:
    ///   - bytes: The next bytes, any length.
    ///   - output: Receives each verified chunk's plaintext, in order (valid only during the call).
    /// - Throws: A blob error code of `Specs/blob-v1.md` §8, or what `output` throws. After an error the decryptor
    ///   refuses further input.
    public func append(_ bytes: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !failed else { throw SealedPushError(.invalidArgument, "the blob reader already failed") }
        let chunkCount = framer.chunkCount
        do {
            try framer.consume(
                bytes,
                onHeader: { salt in payloadKey = try BlobKeyDerivation.payloadKey(blobKey: blobKey, salt: Array(salt)) },
                onChunk: { index, isLast, sealed in
                    let count = sealed.count - BlobFormat.tagLength
                    let opened = plaintext.withUnsafeMutableBytes { buffer -> Bool in
                        let out = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
                        guard let payloadKey else { return false }
                        let nonce = BlobFormat.nonce(index: index, isLast: isLast)
                        return payloadKey.withUnsafeBytes { key in
                            nonce.withUnsafeBytes { ChaCha20Poly1305.open(key: key, nonce: $0, sealed: sealed, into: out) }
                        }
                    }
                    guard opened else {
                        throw SealedPushError(
                            .blobAuthenticationFailure,
                            "blob chunk \(index) of \(chunkCount) did not verify (wrong key, or damaged or reordered data)")
                    }
                    try plaintext.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                })
        } catch {
            failed = true
            throw error
        }
    }

    /// Ends the blob.
    ///
    /// - Throws: `blobTruncated` if the blob is shorter than its declared size says.
    public func finish() throws {
        guard !failed else { throw SealedPushError(.invalidArgument, "the blob reader already failed") }
        try framer.finish()
    }

    /// Reads a whole blob held in memory (for tests and small blobs).
    ///
    /// - Parameters:
    ///   - blob: The whole blob.
    ///   - key: The blob key.
    ///   - plaintextSize: The declared size.
    ///   - maxPlaintextSize: The cap.
    /// - Returns: The plaintext.
    /// - Throws: A blob error code of `Specs/blob-v1.md` §8.
    public static func decrypt(
        _ blob: [UInt8], key: [UInt8], plaintextSize: Int, maxPlaintextSize: Int = BlobFormat.maxPlaintextSize
    ) throws -> [UInt8] {
        let decryptor = try BlobDecryptor(key: key, plaintextSize: plaintextSize, maxPlaintextSize: maxPlaintextSize)
        var plaintext: [UInt8] = []
        try blob.withUnsafeBytes { try decryptor.append($0) { plaintext.append(contentsOf: $0) } }
        try decryptor.finish()
        return plaintext
    }
}
