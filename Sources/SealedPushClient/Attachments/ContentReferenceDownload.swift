#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// Downloads the full content a preview refers to (`content-ref`, `Specs/blob-v1.md` §6.4) into memory, reading it
/// as every blob is read (§5): each chunk is verified the moment its last byte arrives, so a sender that sends more
/// than the declared size fails at the chunk ending there (`blobAuthenticationFailure`) before the extra bytes are
/// reported (`blobTrailingData`), and a body that is not a blob fails at its first bytes (`malformedBlob`) rather than
/// at its end (`blobTruncated`) — the codes the spec and the Java receiver give.
package enum ContentReferenceDownload {
    /// Downloads and opens a content reference.
    ///
    /// - Parameters:
    ///   - reference: Its URL, key and declared size.
    ///   - maxPlaintextSize: The cap for content by reference.
    ///   - transport: How the bytes are fetched.
    ///   - deadline: When the download must have ended.
    /// - Returns: The plaintext (the full content's JSON); the caller wipes it.
    /// - Throws: `malformedAttachment` for a URL that is not one, a blob error code of `Specs/blob-v1.md` §8, or
    ///   what the transport throws.
    package static func plaintext(
        of reference: BlobReference, maxPlaintextSize: Int, transport: any BlobTransport,
        deadline: ContinuousClock.Instant
    ) async throws -> [UInt8] {
        guard let url = URL(string: reference.url) else {
            throw SealedPushError(.malformedAttachment, "the content reference's url is not a URL")
        }
        let sink = try PlaintextSink(
            opener: BlobOpener(key: reference.key, plaintextSize: reference.size, maxPlaintextSize: maxPlaintextSize))
        do {
            try await transport.download(from: url, expectedBytes: sink.ciphertextSize, deadline: deadline) { bytes in
                try sink.append(bytes)
            }
            return try sink.finish()
        } catch {
            sink.discard()
            throw error
        }
    }
}

/// A blob reader that keeps the verified plaintext in memory (a content reference is small: 64 KiB at most).
private final class PlaintextSink: @unchecked Sendable {
    private let lock = ClientLock()
    private let opener: BlobOpener
    private var plaintext: [UInt8] = []

    init(opener: BlobOpener) {
        self.opener = opener
        plaintext.reserveCapacity(opener.plaintextSize)
    }

    var ciphertextSize: Int { opener.ciphertextSize }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        try lock.withLock { try opener.append(bytes) { plaintext.append(contentsOf: $0) } }
    }

    func finish() throws -> [UInt8] {
        try lock.withLock {
            try opener.finish()
            defer { plaintext = [] }
            return plaintext
        }
    }

    func discard() {
        lock.withLock { EnvelopeOpener.wipe(&plaintext) }
    }
}
