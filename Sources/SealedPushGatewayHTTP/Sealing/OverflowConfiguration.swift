import SealedPushCore
import SealedPushServer

/// Where content over the APNs budget goes by reference (`OverflowSealer`): a blob store the devices can fetch
/// from at a URL prefix (for example a `sealed-push blobs serve` over the same directory).
///
/// Without it, content that does not fit inline gets `422 payloadTooLarge` with the numbers.
public struct OverflowConfiguration: Sendable {
    /// Where the encrypted content blobs are written.
    public var store: any BlobStore
    /// The URL prefix devices fetch the blobs from (the blob name is appended).
    public var urlPrefix: String
    /// The largest content JSON sent by reference.
    public var cap: Int

    /// Creates an overflow configuration.
    /// - Parameters:
    ///   - store: The blob store.
    ///   - urlPrefix: The `http(s)://` prefix the blobs are served under.
    ///   - cap: The largest content JSON sent by reference (default 65,536 bytes).
    public init(store: any BlobStore, urlPrefix: String, cap: Int = BlobReference.defaultContentCap) {
        self.store = store
        self.urlPrefix = urlPrefix
        self.cap = cap
    }
}
