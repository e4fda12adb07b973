import SealedPushCore

/// What a ``BlobEncryptor`` made: the blob key and the sizes a descriptor needs.
///
/// The key is a ``SecretBytes`` (wiped when the last reference goes). `description` and `dump` never show it.
public struct EncryptedBlob: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The 32-byte blob key.
    package let key: SecretBytes
    /// The plaintext size in bytes (the descriptor's `size`).
    public let plaintextSize: Int
    /// The blob's size in bytes, ``BlobFormat/ciphertextSize(plaintextSize:)``.
    public let ciphertextSize: Int

    /// A copy of the blob key, for the descriptor that goes into the sealed content. The caller owns the copy.
    public var keyBytes: [UInt8] { key.bytes }

    /// The blob reference (`url`, `key`, `size`) for a content reference or an attachment descriptor.
    ///
    /// - Parameter url: Where the device will fetch the blob.
    /// - Returns: The reference.
    /// - Throws: `malformedAttachment` if the URL breaks `Specs/blob-v1.md` §6.1.
    public func reference(url: String) throws -> BlobReference {
        try BlobReference(url: url, key: key.bytes, size: plaintextSize)
    }

    /// The attachment descriptor for this blob.
    ///
    /// - Parameters:
    ///   - url: Where the device will fetch the blob.
    ///   - mediaType: The file's media type.
    ///   - name: An optional display name.
    ///   - thumbnail: An optional thumbnail descriptor (an image blob of its own).
    /// - Returns: The descriptor to put into the content's `attachments`.
    /// - Throws: `malformedAttachment` or `blobTooLarge` (the size is over the media type's cap).
    public func attachment(
        url: String, mediaType: AttachmentMediaType, name: String? = nil, thumbnail: AttachmentDescriptor? = nil
    ) throws -> AttachmentDescriptor {
        try AttachmentDescriptor(blob: reference(url: url), mediaType: mediaType, name: name, thumbnail: thumbnail)
    }

    public var description: String {
        "EncryptedBlob(plaintextSize: \(plaintextSize), ciphertextSize: \(ciphertextSize), key: <redacted>)"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["plaintextSize": plaintextSize, "ciphertextSize": ciphertextSize], displayStyle: .struct)
    }
}
