/// A blob that was encrypted into a store.
public struct StoredBlob: Sendable {
    /// Its name in the store.
    public let name: BlobName
    /// Its key and sizes.
    public let encrypted: EncryptedBlob
}
