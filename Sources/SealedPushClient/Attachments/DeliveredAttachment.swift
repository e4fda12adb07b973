#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// A decrypted attachment file, ready for `UNNotificationAttachment(identifier:url:options:)`.
///
/// The file is in ``AttachmentConfiguration/directory`` with the extension of its media type; iOS moves it into its
/// own store when the content handler is called.
public struct DeliveredAttachment: Sendable, Hashable {
    /// The attachment's position in the content's `attachments`.
    public let index: Int
    /// The decrypted file.
    public let fileURL: URL
    /// Its media type (`Specs/blob-v1.md` §6.3).
    public let mediaType: AttachmentMediaType
    /// True when this is the attachment's thumbnail, delivered because the full file could not be.
    public let isThumbnail: Bool

    /// Creates a value.
    ///
    /// - Parameters:
    ///   - index: The attachment's position in `attachments`.
    ///   - fileURL: The decrypted file.
    ///   - mediaType: Its media type.
    ///   - isThumbnail: Whether it is the thumbnail.
    public init(index: Int, fileURL: URL, mediaType: AttachmentMediaType, isThumbnail: Bool) {
        self.index = index
        self.fileURL = fileURL
        self.mediaType = mediaType
        self.isThumbnail = isThumbnail
    }
}

/// Why an attachment (or the content sent by reference) was not delivered. Holds no plaintext and no key.
public struct AttachmentFailure: Sendable, Hashable, CustomStringConvertible {
    /// The attachment's position in `attachments`, or nil for the content reference.
    public let index: Int?
    /// The error code (`malformedAttachment`, `blobTooLarge`, `blobUnavailable`, `deadlineExceeded`,
    /// `blobAuthenticationFailure`, `blobTruncated`, …).
    public let code: SealedPushError.Code
    /// What went wrong (names statuses, sizes and limits; never content, keys or blob paths).
    public let message: String

    /// Creates a value.
    ///
    /// - Parameters:
    ///   - index: The attachment's position, or nil for the content reference.
    ///   - code: The error code.
    ///   - message: What went wrong.
    public init(index: Int?, code: SealedPushError.Code, message: String) {
        self.index = index
        self.code = code
        self.message = message
    }

    /// The failure in one line.
    public var description: String {
        "\(index.map { "attachment \($0)" } ?? "content reference"): \(code.name): \(message)"
    }
}
