#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// How ``NotificationServiceStep`` fetches attachments and content sent by reference (`Specs/blob-v1.md`).
///
/// Every one of the first 8 attachments (``BlobFormat/maxAttachments``) is tried, in the sender's order, as the spec
/// requires; elements past the 8th are skipped with `malformedAttachment`.
public struct AttachmentConfiguration: Sendable {
    /// Downloads blobs (`URLSessionBlobTransport` from `SealedPushClientURLSession` in an app extension).
    public var transport: any BlobTransport
    /// Where decrypted files are written (a folder in the app group container). It must exist; files are created
    /// 0600 and named by the step, never by the sender.
    public var directory: URL
    /// Whether content sent by reference (`content-ref`) is fetched. Default true.
    public var fetchesContentReferences: Bool
    /// The largest content fetched by reference, in bytes. Default 65,536 (`Specs/blob-v1.md` §6.4).
    public var contentReferenceCap: Int
    /// Time kept in reserve before the step's deadline so that finished attachments are still delivered. Default 1 s.
    public var deliveryMargin: Duration
    /// How long the files a run verified stay linked (not copied) in the directory's hidden `.verified` folder, so
    /// that an exact duplicate of the envelope delivers them again without downloading anything. Match the
    /// receiver's duplicate window (default 600 s); zero turns reuse off.
    public var reuseWindow: Duration

    /// Creates an attachment configuration.
    ///
    /// - Parameters:
    ///   - transport: Downloads blobs.
    ///   - directory: Where decrypted files go (must exist).
    ///   - fetchesContentReferences: Whether `content-ref` is followed.
    ///   - contentReferenceCap: The largest content fetched by reference.
    ///   - deliveryMargin: Time kept before the step's deadline for delivery.
    ///   - reuseWindow: How long verified files are kept for exact duplicates.
    public init(
        transport: any BlobTransport, directory: URL, fetchesContentReferences: Bool = true,
        contentReferenceCap: Int = BlobReference.defaultContentCap, deliveryMargin: Duration = .seconds(1),
        reuseWindow: Duration = .seconds(600)
    ) {
        self.transport = transport
        self.directory = directory
        self.fetchesContentReferences = fetchesContentReferences
        self.contentReferenceCap = contentReferenceCap
        self.deliveryMargin = deliveryMargin
        self.reuseWindow = reuseWindow
    }
}
