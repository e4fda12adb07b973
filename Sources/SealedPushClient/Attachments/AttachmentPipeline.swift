#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// The step's later work on decrypted content: follow a content reference, then fetch and decrypt the attachments
/// into files, all at once, each with the time that is left. Every failure is recorded per attachment and never stops the text;
/// a cancelled run (the extension's expiry) deletes every file it made.
struct AttachmentPipeline: Sendable {
    let configuration: AttachmentConfiguration

    struct Outcome: Sendable {
        var content: NotificationContent
        var delivered: [DeliveredAttachment] = []
        var failures: [AttachmentFailure] = []

        /// Deletes the delivered files (the request finished without them).
        func removeFiles() {
            for attachment in delivered { try? FileManager.default.removeItem(at: attachment.fileURL) }
        }
    }

    /// The attachment indexes a run will try, for reporting what did not arrive when time runs out first.
    func plannedIndexes(for content: NotificationContent) -> [Int] {
        Array((content.attachments ?? []).indices.prefix(BlobFormat.maxAttachments))
    }

    /// Fetches what `opened` refers to.
    /// - Parameters:
    ///   - opened: The decrypted content.
    ///   - deadline: When the step delivers, whatever is missing.
    ///   - messageID: The envelope's message id (names the verified files kept for duplicates).
    ///   - isDuplicate: Whether the envelope is an exact duplicate: files verified for it are reused, not fetched.
    /// - Returns: The content, the delivered files and the failures.
    func run(
        _ opened: NotificationContent, deadline: ContinuousClock.Instant, messageID: [UInt8] = [],
        isDuplicate: Bool = false
    ) async -> Outcome {
        let deadline = deadline.advanced(by: .zero - configuration.deliveryMargin)
        var outcome = Outcome(content: opened)
        if configuration.fetchesContentReferences, let reference = opened.contentReference {
            do {
                outcome.content = try await fetchContent(reference, deadline: deadline)
            } catch {
                outcome.failures.append(Self.failure(index: nil, error))
            }
        }
        // Leftovers of a run that was killed mid-download (decrypted bytes that never became a file) go first.
        BlobFileOpener.removeAbandonedPartialFiles(in: configuration.directory)
        let cache = configuration.reuseWindow > .zero && messageID.count == 16
            ? VerifiedAttachmentCache(attachmentsDirectory: configuration.directory, window: configuration.reuseWindow)
            : nil
        cache?.sweep()
        let parsed = AttachmentDescriptor.parseAll(outcome.content.attachments ?? [])
        // Every attachment downloads at once, each with the whole time left, so one stalled server cannot spend the
        // deadline of the others (or of a video's thumbnail); results keep the sender's order.
        var results: [Int: (delivered: DeliveredAttachment?, failure: AttachmentFailure?)] = [:]
        await withTaskGroup(of: (Int, DeliveredAttachment?, AttachmentFailure?).self) { group in
            for (index, result) in parsed.enumerated() {
                let descriptor: AttachmentDescriptor
                switch result {
                case .failure(let error):
                    results[index] = (nil, Self.failure(index: index, error))
                    continue
                case .success(let value):
                    descriptor = value
                }
                if isDuplicate, let cache,
                    let reused = cache.reuse(
                        messageID: messageID, index: index, descriptor: descriptor, into: configuration.directory)
                {
                    results[index] = (reused, nil)
                    continue
                }
                group.addTask {
                    do {
                        let file = try await fetchFile(descriptor, deadline: deadline)
                        return (
                            index, DeliveredAttachment(
                                index: index, fileURL: file, mediaType: descriptor.mediaType, isThumbnail: false), nil
                        )
                    } catch {
                        let failure = Self.failure(index: index, error)
                        if Task.isCancelled { return (index, nil, failure) }
                        // A small image of a large video can still make it.
                        if let thumbnail = descriptor.thumbnail,
                            let file = try? await fetchFile(thumbnail, deadline: deadline)
                        {
                            return (
                                index, DeliveredAttachment(
                                    index: index, fileURL: file, mediaType: thumbnail.mediaType, isThumbnail: true),
                                failure
                            )
                        }
                        return (index, nil, failure)
                    }
                }
            }
            for await (index, delivered, failure) in group { results[index] = (delivered, failure) }
        }
        for index in results.keys.sorted() {
            if let delivered = results[index]?.delivered {
                outcome.delivered.append(delivered)
                if !Task.isCancelled { cache?.remember(delivered, messageID: messageID) }
            }
            if let failure = results[index]?.failure { outcome.failures.append(failure) }
        }
        if Task.isCancelled {
            outcome.removeFiles()
            outcome.delivered = []
        }
        return outcome
    }

    /// Downloads one attachment into a verified file; the partial file is deleted on every failure.
    private func fetchFile(_ descriptor: AttachmentDescriptor, deadline: ContinuousClock.Instant) async throws -> URL {
        guard let url = URL(string: descriptor.blob.url) else {
            throw SealedPushError(.malformedAttachment, "the attachment's url is not a URL")
        }
        let opener = try BlobFileOpener(attachment: descriptor, directory: configuration.directory)
        do {
            try await configuration.transport.download(
                from: url, expectedBytes: opener.ciphertextSize, deadline: deadline
            ) { bytes in try opener.append(bytes) }
            try Task.checkCancellation()
            return try opener.finish()
        } catch {
            opener.cancel()
            throw error
        }
    }

    /// Downloads and opens the full content a preview refers to (at most ``AttachmentConfiguration/contentReferenceCap``).
    private func fetchContent(_ value: JSONValue, deadline: ContinuousClock.Instant) async throws -> NotificationContent {
        let reference = try BlobReference(parsing: value, maxSize: configuration.contentReferenceCap)
        var plaintext = try await ContentReferenceDownload.plaintext(
            of: reference, maxPlaintextSize: configuration.contentReferenceCap, transport: configuration.transport,
            deadline: deadline)
        defer { EnvelopeOpener.wipe(&plaintext) }
        var content = try NotificationContent(json: plaintext)
        content.contentReference = nil  // no chains (spec §4.3)
        return content
    }

    static func failure(index: Int?, _ error: any Error) -> AttachmentFailure {
        if let error = error as? SealedPushError {
            return AttachmentFailure(index: index, code: error.code, message: error.message)
        }
        if error is CancellationError {
            return AttachmentFailure(index: index, code: .deadlineExceeded, message: "the download was cancelled")
        }
        return AttachmentFailure(index: index, code: .blobUnavailable, message: "the download failed")
    }
}
