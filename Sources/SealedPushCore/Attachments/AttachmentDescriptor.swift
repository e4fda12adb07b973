/// One element of the content's `attachments` array: an encrypted file to fetch, decrypt and attach
/// (`Specs/blob-v1.md` §6.2).
///
/// Parse each element with ``init(parsing:)``; an element that throws is skipped (the text and the other
/// attachments are still delivered). The blob key is secret: `description` and `dump` never show it.
public struct AttachmentDescriptor: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The longest accepted `name`, in UTF-8 bytes.
    public static let maxNameLength = 255

    /// Where the encrypted file is, its key and its plaintext size.
    public let blob: BlobReference
    /// The media type (kind, cap, file extension).
    public let mediaType: AttachmentMediaType
    /// The sender's display name for the file, if any. Never a path.
    public let name: String?
    /// Why the element's `thumbnail` was dropped, if it had a defective one (the attachment itself is kept).
    public let droppedThumbnailError: SealedPushError?
    private let nestedThumbnail: Thumbnail

    private indirect enum Thumbnail: Sendable, Hashable {
        case none
        case some(AttachmentDescriptor)
    }

    /// The separately encrypted small image to show instead of (or before) a large file, if any. A thumbnail
    /// never has a thumbnail of its own.
    public var thumbnail: AttachmentDescriptor? {
        if case .some(let descriptor) = nestedThumbnail { descriptor } else { nil }
    }

    /// Creates a descriptor for a sealed blob (the sender side).
    ///
    /// - Parameters:
    ///   - blob: The blob's URL, key and size.
    ///   - mediaType: The media type.
    ///   - name: An optional display name, 1 ... 255 bytes.
    ///   - thumbnail: An optional image descriptor without its own thumbnail.
    /// - Throws: `malformedAttachment` for a bad name or thumbnail, `blobTooLarge` for a size over the kind's cap.
    public init(
        blob: BlobReference, mediaType: AttachmentMediaType, name: String? = nil,
        thumbnail: AttachmentDescriptor? = nil
    ) throws {
        try Self.checkName(name)
        guard blob.size <= mediaType.kind.maxSize else {
            throw SealedPushError(
                .blobTooLarge,
                "a \(mediaType.kind.rawValue) attachment is at most \(mediaType.kind.maxSize) bytes, got \(blob.size)")
        }
        if let thumbnail {
            guard thumbnail.mediaType.kind == .image, thumbnail.thumbnail == nil else {
                throw SealedPushError(.malformedAttachment, "a thumbnail must be an image without its own thumbnail")
            }
        }
        self.blob = blob
        self.mediaType = mediaType
        self.name = name
        self.nestedThumbnail = thumbnail.map { .some($0) } ?? .none
        self.droppedThumbnailError = nil
    }

    /// Parses one element of `attachments` (the receiver side), checking every rule of §6.2 and §6.3.
    ///
    /// Checks run in this order: an object, `type`, `name`, then the blob reference (`url`, `key`, `size`, the
    /// cap of the type). A defective `thumbnail` is dropped (see ``droppedThumbnailError``), not thrown.
    ///
    /// - Parameter value: The element.
    /// - Returns: The descriptor.
    /// - Throws: `malformedAttachment` naming the rule, or `blobTooLarge` if `size` is over the type's cap.
    public init(parsing value: JSONValue) throws {
        try self.init(parsing: value, nested: false)
    }

    private init(parsing value: JSONValue, nested: Bool) throws {
        let what = nested ? "a thumbnail" : "an attachment"
        guard let members = value.objectValue else {
            throw SealedPushError(.malformedAttachment, "\(what) must be a JSON object")
        }
        guard let typeText = members["type"]?.stringValue else {
            throw SealedPushError(.malformedAttachment, "\(what) needs a \"type\" string")
        }
        guard let mediaType = AttachmentMediaType(mimeType: typeText) else {
            throw SealedPushError(
                .malformedAttachment,
                "\(what)'s type is not supported (use one of \(AttachmentMediaType.supported.joined(separator: ", ")))")
        }
        if nested, mediaType.kind != .image {
            throw SealedPushError(.malformedAttachment, "a thumbnail must be an image, got \(mediaType.mimeType)")
        }
        var name: String?
        if let nameValue = members["name"] {
            guard case .string(let text) = nameValue else {
                throw SealedPushError(.malformedAttachment, "\(what)'s \"name\" must be a string")
            }
            name = text
        }
        try Self.checkName(name)
        let blob = try BlobReference(parsing: value, maxSize: mediaType.kind.maxSize)
        var thumbnail = Thumbnail.none
        var droppedThumbnailError: SealedPushError?
        if let thumbnailValue = members["thumbnail"] {
            if nested {
                throw SealedPushError(.malformedAttachment, "a thumbnail cannot have its own thumbnail")
            }
            do {
                thumbnail = .some(try AttachmentDescriptor(parsing: thumbnailValue, nested: true))
            } catch let error as SealedPushError {
                droppedThumbnailError = error
            }
        }
        self.blob = blob
        self.mediaType = mediaType
        self.name = name
        self.nestedThumbnail = thumbnail
        self.droppedThumbnailError = droppedThumbnailError
    }

    /// Parses every element of an `attachments` array, keeping each element's own result so one bad descriptor
    /// skips only itself. Elements past the 8th (``BlobFormat/maxAttachments``) are skipped with
    /// `malformedAttachment` (`Specs/blob-v1.md` §6.2).
    ///
    /// - Parameter elements: The array's elements, in order.
    /// - Returns: One result per element, in the same order.
    public static func parseAll(_ elements: [JSONValue]) -> [Result<AttachmentDescriptor, SealedPushError>] {
        elements.enumerated().map { index, element in
            guard index < BlobFormat.maxAttachments else {
                return .failure(
                    SealedPushError(
                        .malformedAttachment,
                        "attachment \(index + 1) is past the limit of \(BlobFormat.maxAttachments) (Specs/blob-v1.md §6.2)"))
            }
            do {
                return .success(try AttachmentDescriptor(parsing: element))
            } catch let error as SealedPushError {
                return .failure(error)
            } catch {
                return .failure(SealedPushError(.malformedAttachment, "the attachment could not be parsed"))
            }
        }
    }

    /// The descriptor as the JSON object that goes into `attachments`.
    public var jsonValue: JSONValue {
        var members = blob.jsonMembers
        members["type"] = .string(mediaType.mimeType)
        if let name { members["name"] = .string(name) }
        if let thumbnail { members["thumbnail"] = thumbnail.jsonValue }
        return .object(members)
    }

    /// Two descriptors are equal when they describe the same attachment (blob, media type, name, thumbnail); why a
    /// thumbnail was dropped is a diagnostic and does not take part.
    public static func == (lhs: AttachmentDescriptor, rhs: AttachmentDescriptor) -> Bool {
        lhs.blob == rhs.blob && lhs.mediaType == rhs.mediaType && lhs.name == rhs.name
            && lhs.nestedThumbnail == rhs.nestedThumbnail
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(blob)
        hasher.combine(mediaType)
        hasher.combine(name)
        hasher.combine(nestedThumbnail)
    }

    public var description: String {
        "AttachmentDescriptor(\(mediaType.mimeType), \(blob)\(thumbnail.map { ", thumbnail: \($0)" } ?? ""))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self, children: ["blob": blob, "mediaType": mediaType, "name": name as Any, "thumbnail": thumbnail as Any],
            displayStyle: .struct)
    }

    private static func checkName(_ name: String?) throws {
        guard let name else { return }
        guard !name.isEmpty, name.utf8.count <= maxNameLength else {
            throw SealedPushError(.malformedAttachment, "an attachment name must be 1...\(maxNameLength) bytes of UTF-8")
        }
    }
}
