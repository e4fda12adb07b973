import Foundation
import SealedPushClient
import SealedPushClientURLSession
import SealedPushCore
import SealedPushServer

// The README's Swift snippets, each as written (one function per snippet, the README's `import` lines at the top of
// this file), so that building this target proves they compile against today's API. `ReadmeSnippetsTests` proves the
// README still shows exactly these lines. The names a snippet takes as given are the parameters of its function.
// Nothing here runs: the snippets name files and directories of an app (/etc/myapp/…).

/// A device's registration as a backend received it (`DeviceKeyRing.registration()`, sent by the app).
struct Registration {
    let publicKey: String
}

/// An app's own metrics, as the extension snippet records them.
struct AppMetrics: Sendable {
    func record(_ outcome: NotificationOutcome) {}
    func record(_ report: NotificationReport) {}
}

/// What `didReceive(_:withContentHandler:)` is given, reduced to what the snippet reads.
struct ExtensionRequest {
    struct Content {
        let userInfo: [AnyHashable: Any]
    }
    let content: Content
}

enum ReadmeSnippets {
    static func backendSealsAndBuildsTheAPNsBody(registration: Registration) throws {
let identity = try ServerIdentity(contentsOfFile: "/etc/myapp/sealedpush.key")   // from `sealed-push keygen`
let sealer = try Sealer(identity: identity, topic: "com.example.chat",
                        placeholder: .text(body: "New message"))
let device = try DevicePublicKey(text: registration.publicKey)                    // the device's SPK1:… key
let sealed = try sealer.seal(NotificationContent(title: "Alice", body: "Lunch at 1?", threadID: "alice"),
                             to: device, ttl: 3600)
// sealed.payload is the exact APNs JSON body (≤ 4096 bytes, checked before sealing): send it with
// apns-push-type: alert. Content that does not fit throws SealedPushError(.payloadTooLarge) with the numbers.
        _ = sealed
    }

    static func imagesAudioVideoAndLongContent(sealer: Sealer, device: DevicePublicKey, longText: String) async throws {
// Encrypt a file into a blob store once (constant memory; the store only ever holds ciphertext) and put its
// descriptor — url, key, size, type — in the content. Serve the store with BlobServer (or `sealed-push blobs serve`).
let store = try FileSystemBlobStore(directory: "/var/lib/myapp/blobs")
let source = try BlobSourceFile(path: "photo.jpg")
let stored = try await store.store(encryptor: BlobEncryptor()) { try source.read(into: $0) }
let photo = try stored.encrypted.attachment(url: "https://blobs.example.com/" + stored.name.text,
                                            mediaType: AttachmentMediaType(mimeType: "image/jpeg")!)
// Content over the 4 KB budget goes by reference automatically: OverflowSealer stores it as a blob and seals a
// preview that fits (title, the start of the body) with a `content-ref` the extension follows.
let overflow = try OverflowSealer(sealer: sealer, store: store, urlPrefix: "https://blobs.example.com/")
let sealedPhoto = try await overflow.seal(NotificationContent(title: "Alice", body: longText,
                                                              attachments: [photo.jsonValue]), to: device)
        _ = sealedPhoto
    }

    static func notificationServiceExtension(
        stateDirectory: URL, appGroupAttachments: URL, metrics: AppMetrics, request: ExtensionRequest
    ) throws {
// The extension opens the key ring read-only: it never creates or rotates keys, and reports
// `keysUnavailable` (showing the placeholder) when they cannot be read, e.g. before the first unlock.
let receiver = try SealedPushReceiver(directory: stateDirectory,            // or keyStore: KeychainKeyStore(…)
                                      serverPublicKeys: [try KeyText.decodePublicKey("SPK1:…")],
                                      topic: "com.example.chat")
let step = NotificationServiceStep(receiver: receiver, configuration: .init(
    fallbackPlaceholder: .localized(key: "NOTIFICATION_PLACEHOLDER"),
    observer: { outcome in metrics.record(outcome) },                       // .decrypted or .fallback(reason)
    // Attachments and content by reference, downloaded with the time left, decrypted into verified files
    // (import SealedPushClientURLSession); the text is delivered whatever happens to them.
    attachments: AttachmentConfiguration(transport: URLSessionBlobTransport(), directory: appGroupAttachments),
    reportObserver: { report in metrics.record(report) }))                  // which attachments failed, and why

// didReceive(_:withContentHandler:)
step.didReceive(NotificationRequest(userInfo: request.content.userInfo)) { delivery in
    // Called exactly once. delivery.content is .decrypted(content), .placeholder(p) or .original: map it to
    // UNMutableNotificationContent (ContentHandlerBox in the example does), delivery.attachments to
    // UNNotificationAttachment, and call contentHandler.
}
// serviceExtensionTimeWillExpire()
step.serviceExtensionTimeWillExpire()                     // delivers the best attempt now, if not delivered yet
    }
}
