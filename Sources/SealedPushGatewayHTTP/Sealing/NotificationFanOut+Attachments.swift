import Foundation
import SealedPushCore
import SealedPushServer

extension NotificationFanOut {
    /// Encrypts each attachment once (one blob, one key, whatever the number of recipients) into the blob store and
    /// returns their descriptors; the plaintext (uploaded or fetched) is zeroed as soon as it is encrypted. On an
    /// error the blobs already written are deleted.
    /// - Throws: ``GatewayAPIError`` naming `attachments[i]…`; `422 noBlobStore` when the gateway has no blob store.
    func encryptAttachments(_ sources: inout [AttachmentSource]) async throws -> [JSONValue] {
        defer { for index in sources.indices { sources[index].wipe() } }
        guard !sources.isEmpty else { return [] }
        guard let overflow, let fetcher else {
            throw GatewayAPIError(
                .unprocessableContent, "noBlobStore",
                "this gateway has no blob store (the configuration's overflow section), so it cannot carry attachments",
                field: "attachments")
        }
        var stored: [BlobName] = []
        var descriptors: [JSONValue] = []
        do {
            for index in sources.indices {
                let source = sources[index]
                let field = "attachments[\(index)]"
                var bytes: [UInt8]
                switch source.origin {
                case .inline(let uploaded): bytes = uploaded
                case .url(let url):
                    bytes = try await fetcher.fetch(url, limit: source.mediaType.kind.maxSize, field: field + ".url")
                }
                sources[index].wipe()
                defer { Sodium.wipe(&bytes) }
                let blob: StoredBlob
                do {
                    blob = try await overflow.store.store(encryptor: BlobEncryptor(), bytes: bytes)
                } catch let error as SealedPushError {
                    calls.logger.error("attachment blob could not be stored", metadata: ["code": "\(error.code)"])
                    throw GatewayAPIError.unavailable
                }
                stored.append(blob.name)
                do {
                    let descriptor = try blob.encrypted.attachment(
                        url: overflow.urlPrefix + blob.name.text, mediaType: source.mediaType, name: source.name)
                    descriptors.append(descriptor.jsonValue)
                } catch let error as SealedPushError {
                    throw GatewayAPIError.invalid("\(field): \(error.message)", field: field)
                }
                metrics.attachmentBytes.increment(by: bytes.count)
            }
        } catch {
            for name in stored { _ = try? await overflow.store.delete(name) }
            throw error
        }
        return descriptors
    }
}
