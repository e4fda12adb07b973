import SealedPushCore
import SealedPushServer

/// The gateway's blob store: where content over the APNs budget goes by reference (`OverflowSealer`) and where a
/// send's attachments are encrypted, once per notification; devices fetch the blobs at a URL prefix (the gateway's
/// own blob server, `overflow.listen`, or a `sealed-push blobs serve` over the same directory).
///
/// Without it, content that does not fit inline gets `422 payloadTooLarge` with the numbers, and a send with
/// attachments gets `422 noBlobStore`.
public struct OverflowConfiguration: Sendable {
    /// Where the encrypted content blobs are written.
    public var store: any BlobStore
    /// The URL prefix devices fetch the blobs from (the blob name is appended).
    public var urlPrefix: String
    /// The largest content JSON sent by reference.
    public var cap: Int
    /// How attachments given by URL are fetched.
    public var fetchPolicy: AttachmentFetchPolicy

    /// Creates an overflow configuration.
    /// - Parameters:
    ///   - store: The blob store.
    ///   - urlPrefix: The `http(s)://` prefix the blobs are served under.
    ///   - cap: The largest content JSON sent by reference (default 65,536 bytes).
    ///   - fetchPolicy: How attachments given by URL are fetched (default `https` only, 20 s).
    public init(
        store: any BlobStore, urlPrefix: String, cap: Int = BlobReference.defaultContentCap,
        fetchPolicy: AttachmentFetchPolicy = AttachmentFetchPolicy()
    ) {
        self.store = store
        self.urlPrefix = urlPrefix
        self.cap = cap
        self.fetchPolicy = fetchPolicy
    }
}
