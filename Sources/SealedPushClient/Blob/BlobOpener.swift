import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// Reads an encrypted blob incrementally with swift-crypto (`Specs/blob-v1.md` §5).
///
/// Feed the bytes as they arrive from the network, in any split. Each chunk is verified the moment its last byte
/// arrives and only then is its plaintext handed on; the declared size is the limit, so a sender that sends one
/// byte more than it declared fails at that byte (`blobTrailingData`), whatever `Content-Length` said. Memory is
/// one chunk (64 KiB) whatever the blob size. Errors carry no plaintext and no key material.
///
/// To decrypt into a file, use ``BlobFileOpener``, which also deletes the partial file on failure.
public final class BlobOpener {
    private var framer: BlobFramer
    private var blobKey: SymmetricKey?
    private var payloadKey: SymmetricKey?
    private var failed = false

    /// The declared plaintext size.
    public var plaintextSize: Int { framer.plaintextSize }
    /// The blob's exact length in bytes.
    public var ciphertextSize: Int { framer.ciphertextSize }
    /// The blob bytes accepted so far.
    public var receivedByteCount: Int { framer.received }
    /// Whether every byte has arrived and every chunk verified.
    public var isComplete: Bool { framer.isComplete && !failed }

    /// Starts reading a blob.
    ///
    /// - Parameters:
    ///   - key: The 32-byte blob key (the descriptor's `key`). The opener keeps its own copy.
    ///   - plaintextSize: The declared size (the descriptor's `size`).
    ///   - maxPlaintextSize: The cap for this kind of blob (for an attachment, its kind's cap); a larger declared
    ///     size fails at once, before any byte is fetched.
    /// - Throws: `invalidKey` for a key of the wrong length, `blobTooLarge` for a size over the cap.
    public init(key: [UInt8], plaintextSize: Int, maxPlaintextSize: Int = BlobFormat.maxPlaintextSize) throws {
        guard key.count == BlobFormat.keyLength else {
            throw SealedPushError(.invalidKey, "a blob key is 32 bytes, got \(key.count)")
        }
        framer = try BlobFramer(plaintextSize: plaintextSize, maxPlaintextSize: maxPlaintextSize)
        blobKey = SymmetricKey(data: key)
    }

    /// Accepts the next bytes of the blob.
    ///
    /// - Parameters:
    ///   - bytes: The next bytes, any length.
    ///   - output: Receives each verified chunk's plaintext, in order (valid only during the call).
    /// - Throws: `malformedBlob`, `unsupportedBlobVersion`, `blobAuthenticationFailure`, `blobTrailingData`, or
    ///   what `output` throws. After an error the opener refuses further input.
    public func append(_ bytes: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !failed else { throw SealedPushError(.invalidArgument, "the blob reader already failed") }
        let chunkCount = framer.chunkCount
        do {
            try framer.consume(
                bytes,
                onHeader: { salt in
                    guard let blobKey else { return }
                    payloadKey = HKDF<SHA256>.deriveKey(
                        inputKeyMaterial: blobKey, salt: salt, info: BlobFormat.payloadKeyInfo,
                        outputByteCount: BlobFormat.keyLength)
                    self.blobKey = nil
                },
                onChunk: { index, isLast, sealed in
                    let plaintext: Data
                    do {
                        guard let payloadKey else { throw SealedPushError(.invalidArgument, "no payload key") }
                        let tagStart = sealed.count - BlobFormat.tagLength
                        let box = try ChaChaPoly.SealedBox(
                            nonce: ChaChaPoly.Nonce(data: BlobFormat.nonce(index: index, isLast: isLast)),
                            ciphertext: UnsafeRawBufferPointer(rebasing: sealed[0..<tagStart]),
                            tag: UnsafeRawBufferPointer(rebasing: sealed[tagStart...]))
                        plaintext = try ChaChaPoly.open(box, using: payloadKey)
                    } catch {
                        throw SealedPushError(
                            .blobAuthenticationFailure,
                            "blob chunk \(index) of \(chunkCount) did not verify (wrong key, or damaged or reordered data)")
                    }
                    try plaintext.withUnsafeBytes { try output($0) }
                })
        } catch {
            fail()
            throw error
        }
    }

    /// Accepts the next bytes of the blob (`Data`, `[UInt8]`, …).
    ///
    /// - Parameters:
    ///   - bytes: The next bytes.
    ///   - output: Receives each verified chunk's plaintext.
    /// - Throws: As the pointer-taking `append(_:output:)`.
    public func append(
        contentsOf bytes: some ContiguousBytes, output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try bytes.withUnsafeBytes { try append($0, output: output) }
    }

    /// Ends the blob.
    ///
    /// - Throws: `blobTruncated` if fewer bytes arrived than the declared size needs.
    public func finish() throws {
        guard !failed else { throw SealedPushError(.invalidArgument, "the blob reader already failed") }
        do {
            try framer.finish()
        } catch {
            fail()
            throw error
        }
        payloadKey = nil
    }

    /// Reads a whole blob held in memory, such as content fetched by reference (`Specs/blob-v1.md` §6.4).
    ///
    /// - Parameters:
    ///   - blob: The whole blob.
    ///   - reference: Its URL, key and declared size.
    ///   - maxPlaintextSize: The cap (64 KiB for content by reference).
    /// - Returns: The plaintext.
    /// - Throws: A blob error code of `Specs/blob-v1.md` §8.
    public static func open(
        _ blob: some ContiguousBytes, reference: BlobReference,
        maxPlaintextSize: Int = BlobReference.defaultContentCap
    ) throws -> [UInt8] {
        let opener = try BlobOpener(key: reference.key, plaintextSize: reference.size, maxPlaintextSize: maxPlaintextSize)
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(reference.size)
        try opener.append(contentsOf: blob) { plaintext.append(contentsOf: $0) }
        try opener.finish()
        return plaintext
    }

    private func fail() {
        failed = true
        blobKey = nil
        payloadKey = nil
    }
}
