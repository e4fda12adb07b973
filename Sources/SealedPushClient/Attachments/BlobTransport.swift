#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// Fetches an encrypted blob's bytes for the extension: the one network dependency of attachments and of content
/// sent by reference (`Specs/blob-v1.md`).
///
/// `SealedPushClient` defines only this protocol, so an iOS extension links no HTTP stack of ours: the
/// `SealedPushClientURLSession` product implements it on `URLSession` (Apple platforms and Linux).
///
/// Contract for implementations:
/// - GET `url` and hand every body byte to `receive` as it arrives, in order, in pieces of any size; `receive`
///   verifies and writes (``BlobFileOpener``) and throws to stop the download.
/// - Never trust `Content-Length`: when more than `expectedBytes` body bytes arrive, hand `receive` the bytes up
///   to `expectedBytes` first (so a chunk that fails there is reported as such), then stop with
///   `blobTrailingData`; stop with `blobTruncated` when the body ends short. The result never depends on how the
///   body was split into reads (`Specs/blob-v1.md` §5).
/// - Stop by `deadline` with `deadlineExceeded`, and promptly when the calling task is cancelled (the extension's
///   expiry), throwing `CancellationError`.
/// - Report an HTTP status other than 200, a connection failure or a reset as `blobUnavailable`, naming the status
///   or the failure and the URL's host (never the path: it names the blob).
public protocol BlobTransport: Sendable {
    /// Downloads a blob.
    ///
    /// - Parameters:
    ///   - url: The blob's URL (from its descriptor).
    ///   - expectedBytes: The blob's exact size, from the descriptor's plaintext size (`Specs/blob-v1.md` §3).
    ///   - deadline: When the download must have ended.
    ///   - receive: Takes each piece of the body as it arrives; throws to abort.
    /// - Throws: `SealedPushError` with `blobUnavailable`, `blobTrailingData`, `blobTruncated`, `deadlineExceeded`, or
    ///   what `receive` throws; `CancellationError` when the task is cancelled.
    func download(
        from url: URL, expectedBytes: Int, deadline: ContinuousClock.Instant,
        receive: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws
}
