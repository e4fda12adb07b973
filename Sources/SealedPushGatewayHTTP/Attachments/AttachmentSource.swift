import Foundation
import SealedPushCore
import SealedPushServer

/// One item of a send request's `attachments`: a file the gateway encrypts once for the notification, stores in its
/// blob store and describes in every recipient's sealed content (`Specs/blob-v1.md` §6).
struct AttachmentSource: Sendable {
    /// Where the file's bytes come from.
    enum Origin: Sendable {
        /// Uploaded in the request (base64 `data`, decoded).
        case inline([UInt8])
        /// Fetched by the gateway from the backend's `http(s)` URL.
        case url(URL)
    }

    /// The most attachments one send carries.
    static let maxCount = 8

    var origin: Origin
    /// The media type (one `UNNotificationAttachment` accepts), which sets the size cap.
    var mediaType: AttachmentMediaType
    /// The display name, if given.
    var name: String?

    /// Parses `attachments[index]`.
    /// - Throws: ``GatewayAPIError`` naming `attachments[i].FIELD`; messages never echo the data or the URL's path.
    init(_ fields: JSONFields, index: Int) throws {
        let path = "attachments[\(index)]"
        try fields.rejectUnknown(["type", "name", "data", "url"])
        let type = try fields.string("type", required: true)!
        guard let mediaType = AttachmentMediaType(mimeType: type) else {
            throw GatewayAPIError.invalid(
                "\(path).type is not a supported media type; supported: "
                    + AttachmentMediaType.supported.joined(separator: ", "), field: "\(path).type")
        }
        self.mediaType = mediaType
        name = try fields.string("name")
        if let name {
            guard !name.isEmpty, name.utf8.count <= AttachmentDescriptor.maxNameLength,
                !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "/" })
            else {
                throw GatewayAPIError.invalid(
                    "\(path).name must be 1 to \(AttachmentDescriptor.maxNameLength) bytes of UTF-8 without control "
                        + "characters or /", field: "\(path).name")
            }
        }
        switch (try fields.string("data"), try fields.string("url")) {
        case (let data?, nil):
            guard var bytes = Data(base64Encoded: data).map({ [UInt8]($0) }) else {
                throw GatewayAPIError.invalid("\(path).data is not base64 (RFC 4648 §4, padded)", field: "\(path).data")
            }
            guard !bytes.isEmpty else {
                throw GatewayAPIError.invalid("\(path).data is empty", field: "\(path).data")
            }
            guard bytes.count <= mediaType.kind.maxSize else {
                let count = bytes.count
                Sodium.wipe(&bytes)
                throw GatewayAPIError(
                    .unprocessableContent, "blobTooLarge",
                    "\(path) is \(count) bytes; a \(mediaType.kind.rawValue) attachment is at most \(mediaType.kind.maxSize)",
                    field: "\(path).data", needed: count, limit: mediaType.kind.maxSize)
            }
            origin = .inline(bytes)
        case (nil, let text?):
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
                let host = url.host, !host.isEmpty, url.user == nil
            else {
                throw GatewayAPIError.invalid(
                    "\(path).url must be an absolute http(s) URL with a host and no user info", field: "\(path).url")
            }
            origin = .url(url)
        default:
            throw GatewayAPIError.invalid("\(path) needs exactly one of data (base64) or url", field: path)
        }
    }

    /// Zeroes uploaded bytes (the plaintext of an attachment).
    mutating func wipe() {
        if case .inline(var bytes) = origin {
            origin = .inline([])
            Sodium.wipe(&bytes)
        }
    }
}
