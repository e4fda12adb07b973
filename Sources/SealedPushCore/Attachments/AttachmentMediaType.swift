/// A media type an attachment may have, with its kind, its size cap and the file extension
/// `UNNotificationAttachment` needs (`Specs/blob-v1.md` §6.3).
public struct AttachmentMediaType: Sendable, Hashable, CustomStringConvertible {
    /// What kind of media this is; each kind has Apple's size cap.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case image, audio, video

        /// Apple's `UNNotificationAttachment` limit for this kind, in bytes (decimal megabytes).
        public var maxSize: Int {
            switch self {
            case .image: 10_000_000
            case .audio: 5_000_000
            case .video: 50_000_000
            }
        }
    }

    /// The media type in lowercase, for example `image/jpeg`.
    public let mimeType: String
    /// The kind (image, audio, video).
    public let kind: Kind
    /// The file extension to give the decrypted file, without the dot, for example `jpg`.
    public let fileExtension: String

    public var description: String { mimeType }

    /// Looks up a supported media type.
    ///
    /// - Parameter mimeType: A `type/subtype` string, compared ASCII case-insensitively; parameters are not allowed.
    /// - Returns: The media type, or `nil` if version 1 does not support it.
    public init?(mimeType: String) {
        let lowered = String(decoding: mimeType.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        guard let entry = Self.table[lowered] else { return nil }
        self.mimeType = lowered
        self.kind = entry.kind
        self.fileExtension = entry.fileExtension
    }

    /// Every supported media type (spec §6.3), by lowercase name.
    public static let supported: [String] = table.keys.sorted()

    /// The media type a sender names for a file with this extension (`jpg` and `jpeg`, `mov`, `m4a`, …), for
    /// tools that attach files by name; nil for an extension with no supported type.
    ///
    /// - Parameter fileExtension: A file name extension, without the dot (compared case-insensitively).
    /// - Returns: The preferred media type for it.
    public static func forFileExtension(_ fileExtension: String) -> AttachmentMediaType? {
        let lowered = fileExtension.lowercased()
        let preferred = [
            "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "mp3": "audio/mpeg",
            "m4a": "audio/mp4", "wav": "audio/wav", "aif": "audio/aiff", "aiff": "audio/aiff", "mp4": "video/mp4",
            "m4v": "video/x-m4v", "mov": "video/quicktime", "mpg": "video/mpeg", "mpeg": "video/mpeg",
            "avi": "video/x-msvideo",
        ]
        return preferred[lowered].flatMap { AttachmentMediaType(mimeType: $0) }
    }

    private static let table: [String: (kind: Kind, fileExtension: String)] = [
        "image/jpeg": (.image, "jpg"), "image/png": (.image, "png"), "image/gif": (.image, "gif"),
        "audio/mpeg": (.audio, "mp3"),
        "audio/mp4": (.audio, "m4a"), "audio/x-m4a": (.audio, "m4a"), "audio/m4a": (.audio, "m4a"),
        "audio/wav": (.audio, "wav"), "audio/x-wav": (.audio, "wav"), "audio/wave": (.audio, "wav"),
        "audio/aiff": (.audio, "aiff"), "audio/x-aiff": (.audio, "aiff"),
        "video/mp4": (.video, "mp4"), "video/x-m4v": (.video, "m4v"), "video/quicktime": (.video, "mov"),
        "video/mpeg": (.video, "mpg"), "video/x-msvideo": (.video, "avi"), "video/avi": (.video, "avi"),
    ]
}
