#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// Hard links to the attachment files a run verified, kept for the duplicate window, so that an exact duplicate of
/// the envelope (`Specs/keyring-v1.md` §5.5) delivers the same files again without downloading or decrypting
/// anything. (Before, 20 openings of one envelope with a 50 MB video wrote 954 MB.)
///
/// The links live in a hidden folder of the attachments directory, named after the message id and the attachment's
/// index, and share the data of the delivered file (a link, not a copy). Each run deletes the ones older than
/// ``AttachmentConfiguration/reuseWindow``, so no decrypted file outlives the window unaccounted for.
struct VerifiedAttachmentCache: Sendable {
    let folder: URL
    let window: Duration

    init(attachmentsDirectory: URL, window: Duration) {
        folder = attachmentsDirectory.appendingPathComponent(".verified", isDirectory: true)
        self.window = window
    }

    private static func name(messageID: [UInt8], index: Int, thumbnail: Bool, fileExtension: String) -> String {
        Hex.encode(messageID) + "-\(index)" + (thumbnail ? "-t" : "") + "." + fileExtension
    }

    /// Links a verified, delivered file under its message id and index (a failure only costs a later download).
    func remember(_ attachment: DeliveredAttachment, messageID: [UInt8]) {
        guard ensureFolder() else { return }
        let target = folder.appendingPathComponent(
            Self.name(
                messageID: messageID, index: attachment.index, thumbnail: attachment.isThumbnail,
                fileExtension: attachment.mediaType.fileExtension))
        _ = link(attachment.fileURL.path, target.path)
    }

    /// A new file in `directory` with the content verified earlier for this attachment, if the window still holds
    /// it: the full file when it arrived, else the thumbnail that stood in for it.
    func reuse(messageID: [UInt8], index: Int, descriptor: AttachmentDescriptor, into directory: URL)
        -> DeliveredAttachment?
    {
        var candidates = [(descriptor.mediaType, false)]
        if let thumbnail = descriptor.thumbnail { candidates.append((thumbnail.mediaType, true)) }
        for (mediaType, isThumbnail) in candidates {
            let cached = folder.appendingPathComponent(
                Self.name(
                    messageID: messageID, index: index, thumbnail: isThumbnail, fileExtension: mediaType.fileExtension))
            var info = stat()
            guard lstat(cached.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            var generator = SystemRandomNumberGenerator()
            let stem = (0..<2).map { _ in
                let value: UInt64 = generator.next()
                let text = String(value, radix: 16)
                return String(repeating: "0", count: 16 - text.count) + text
            }.joined()
            let file = directory.appendingPathComponent(stem + "." + mediaType.fileExtension)
            guard link(cached.path, file.path) == 0 else { continue }
            return DeliveredAttachment(index: index, fileURL: file, mediaType: mediaType, isThumbnail: isThumbnail)
        }
        return nil
    }

    /// Deletes the links older than the window.
    func sweep() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        let parts = window.components
        let limit = Double(parts.seconds) + Double(parts.attoseconds) / 1e18
        let now = Date().timeIntervalSince1970
        for name in names {
            let path = folder.path + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            #if canImport(Darwin)
            let modified = Double(info.st_mtimespec.tv_sec)
            #else
            let modified = Double(info.st_mtim.tv_sec)
            #endif
            if now - modified > limit || (info.st_mode & S_IFMT) != S_IFREG { unlink(path) }
        }
    }

    private func ensureFolder() -> Bool {
        if mkdir(folder.path, 0o700) == 0 { return true }
        var info = stat()
        return errno == EEXIST && lstat(folder.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
