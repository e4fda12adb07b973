import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushServer

/// Attachments and overflow for `seal`: files are encrypted into blobs in a directory (served by
/// `sealed-push blobs serve`), their descriptors go into the content, and content over the budget goes by reference.
struct AttachOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Attach a file (repeatable): encrypted into --blob-dir, its descriptor added to the content.", valueName: "file"))
    var attach: [String] = []

    @Option(help: ArgumentHelp(
        "The media type of each --attach, in order (default: from the file extension).", valueName: "mime"))
    var attachType: [String] = []

    @Option(help: ArgumentHelp(
        "The blob directory (created 0700): attachments, and content over the APNs budget sent by reference.",
        valueName: "dir"))
    var blobDir: String?

    @Option(help: ArgumentHelp(
        "The URL prefix devices fetch blobs from, e.g. http://127.0.0.1:8443/ (the blob name is appended).",
        valueName: "url"))
    var blobURL: String?

    func validate() throws {
        if !attach.isEmpty || blobDir != nil || blobURL != nil {
            guard blobDir != nil, blobURL != nil else {
                throw ValidationError("--attach and content by reference need both --blob-dir and --blob-url")
            }
        }
        if !attachType.isEmpty, attachType.count != attach.count {
            throw ValidationError("give one --attach-type per --attach (\(attach.count)), or none")
        }
        if attach.count > BlobFormat.maxAttachments {
            throw ValidationError(
                "\(attach.count) --attach given; a notification carries at most \(BlobFormat.maxAttachments) attachments "
                    + "(Specs/blob-v1.md §6.2)")
        }
        if let blobURL {
            // Checked before anything is stored: a refused URL must not leave an orphan blob behind.
            do {
                _ = try BlobReference(
                    url: blobURL + String(repeating: "A", count: 22), key: [UInt8](repeating: 0, count: BlobFormat.keyLength),
                    size: 0)
            } catch let error as SealedPushError {
                throw ValidationError("--blob-url \(blobURL): \(error.message)")
            }
        }
    }

    /// The blob store and URL prefix, when configured.
    func store() throws -> (FileSystemBlobStore, String)? {
        guard let blobDir, let blobURL else { return nil }
        try FileManager.default.createDirectory(atPath: blobDir, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        return (try FileSystemBlobStore(directory: blobDir), blobURL)
    }

    /// Encrypts every attached file into the store and returns their descriptors, printing progress to stderr.
    ///
    /// Every file's media type, size and name, and the total count, are checked before the first blob is stored;
    /// if storing fails part way, the blobs already stored are deleted (no orphans, `Specs/blob-v1.md` §7).
    /// - Parameters:
    ///   - store: Where the encrypted blobs go.
    ///   - urlPrefix: The URL prefix devices fetch them from.
    ///   - existing: How many attachments the content already carries (the limit counts them too).
    /// - Returns: One descriptor per `--attach`, in order.
    func attachments(store: FileSystemBlobStore, urlPrefix: String, existing: Int = 0) async throws -> [JSONValue] {
        guard existing + attach.count <= BlobFormat.maxAttachments else {
            throw SealedPushError(
                .invalidArgument,
                "the content has \(existing) attachments and \(attach.count) --attach; a notification carries at most "
                    + "\(BlobFormat.maxAttachments) (Specs/blob-v1.md §6.2)")
        }
        var planned: [(path: String, mediaType: AttachmentMediaType, source: BlobSourceFile)] = []
        for (index, path) in attach.enumerated() {
            let url = URL(fileURLWithPath: path)
            let mediaType: AttachmentMediaType
            if index < attachType.count {
                guard let given = AttachmentMediaType(mimeType: attachType[index]) else {
                    throw SealedPushError(
                        .invalidArgument,
                        "unsupported media type \(attachType[index]); supported: "
                            + AttachmentMediaType.supported.joined(separator: ", "))
                }
                mediaType = given
            } else {
                guard let guessed = AttachmentMediaType.forFileExtension(url.pathExtension) else {
                    throw SealedPushError(
                        .invalidArgument, "cannot tell the media type of \(url.lastPathComponent); give --attach-type")
                }
                mediaType = guessed
            }
            let source = try BlobSourceFile(path: path)
            guard source.size <= mediaType.kind.maxSize else {
                throw SealedPushError(
                    .blobTooLarge,
                    "\(url.lastPathComponent) is \(source.size) bytes; a \(mediaType.kind.rawValue) attachment is at most "
                        + "\(mediaType.kind.maxSize) bytes")
            }
            guard url.lastPathComponent.utf8.count <= AttachmentDescriptor.maxNameLength else {
                throw SealedPushError(
                    .invalidArgument,
                    "the file name of --attach \(index + 1) is \(url.lastPathComponent.utf8.count) bytes; an attachment "
                        + "name is at most \(AttachmentDescriptor.maxNameLength) bytes of UTF-8")
            }
            planned.append((path, mediaType, source))
        }
        var descriptors: [JSONValue] = []
        var storedNames: [BlobName] = []
        do {
            for (path, mediaType, source) in planned {
                let url = URL(fileURLWithPath: path)
                CLIIO.writeStderr("encrypting \(url.lastPathComponent) (\(source.size) bytes, \(mediaType.mimeType))…\n")
                let stored = try await store.store(encryptor: BlobEncryptor()) { try source.read(into: $0) }
                storedNames.append(stored.name)
                let descriptor = try stored.encrypted.attachment(
                    url: urlPrefix + stored.name.text, mediaType: mediaType, name: url.lastPathComponent)
                CLIIO.writeStderr("  → blob \(stored.name.text) (\(stored.encrypted.ciphertextSize) bytes)\n")
                descriptors.append(descriptor.jsonValue)
            }
        } catch {
            for name in storedNames { _ = try? await store.delete(name) }
            throw error
        }
        return descriptors
    }
}
