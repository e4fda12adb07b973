// EXAMPLE ONLY — iOS. This file is outside `Sources/`, so SwiftPM (and Linux CI) never builds it.
// Copy it into a Notification Service Extension target of an iOS 17+ app that depends on the
// `SealedPushClient` and `SealedPushCore` products. See README.md next to this file.
//
// Every type here is `nonisolated`: Xcode 26 targets default to main-actor isolation, but the system calls
// `didReceive` and `serviceExtensionTimeWillExpire` on its own threads, and the step and key store are used from
// background queues.

import Foundation
import Security
import SealedPushClient
import SealedPushClientURLSession
import SealedPushCore
import UserNotifications

// MARK: - Configuration shared by the app and the extension

nonisolated enum SealedPushConfig {
    /// Keychain access group shared by the app and the extension (Keychain Sharing capability,
    /// "$(AppIdentifierPrefix)com.example.chat.shared").
    static let keychainAccessGroup = "ABCDE12345.com.example.chat.shared"
    /// App group shared by the app and the extension (App Groups capability); holds the replay state.
    static let appGroup = "group.com.example.chat"
    /// The APNs topic: the app's bundle identifier.
    static let topic = "com.example.chat"
    /// Pinned server identity public keys (spec text form). Several, so the backend identity can rotate.
    static let serverPublicKeys = [
        "SPK1:QxDul9iMwfCIpVdsd6sM9cOseX89lROcbIS1QpxZZio",
    ]
    /// Shown when the envelope cannot be opened in time; a key in the app's Localizable.strings. Never plaintext.
    static let fallback = Placeholder.localized(key: "NOTIFICATION_PLACEHOLDER")
    /// Whether Apple granted this extension the notification-filtering entitlement
    /// (`com.apple.developer.usernotifications.filtering`, requested from Apple and added to the extension target's
    /// entitlements). With it, an exact duplicate of a notification shown moments ago (a backend's resend) is
    /// suppressed; without it, it is delivered again with the same content (and the same `apns-collapse-id`, it
    /// replaces the shown one). Never the placeholder. Leave false unless the entitlement is in the signed build:
    /// without it iOS ignores an empty content and shows the sender's placeholder instead.
    static let hasFilteringEntitlement = false
    /// Where receipts go: the gateway's `POST /v1/apps/{appId}/receipts` (no API key: the sealing is the credential).
    static let receiptsURL = URL(string: "https://push.example.com/v1/apps/chat/receipts")!

    /// `<app group container>/SealedPush`, the replay guard's directory (created by the app, never the extension).
    static var stateDirectory: URL? {
        FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: appGroup)?
            .appendingPathComponent("SealedPush", isDirectory: true)
    }

    /// `<app group container>/SealedPush/Attachments`: decrypted attachment files before iOS takes them (created by
    /// the app). iOS moves each attached file into its own store when the content handler is called.
    static var attachmentDirectory: URL? {
        stateDirectory?.appendingPathComponent("Attachments", isDirectory: true)
    }
}

// MARK: - Key ring in the shared keychain

/// A `KeyStore` keeping the key ring file form (`Specs/keyring-v1.md` §2) in one generic-password item of the
/// shared keychain access group, readable "after first unlock, this device only". The extension uses it read-only:
/// before the first unlock after a reboot the item is unreadable (`errSecInteractionNotAllowed`) and the step
/// reports `keysUnavailable` — it never generates a key. Like `FileKeyStore`, `update` writes nothing when the ring
/// did not change and refuses to delete it.
nonisolated struct KeychainKeyStore: KeyStore {
    let accessGroup: String
    let isReadOnly: Bool
    private static let service = "SealedPush"
    private static let account = "keyring-v1"
    private static let writeLock = NSLock()

    private var baseQuery: [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: Self.service,
            kSecAttrAccount as String: Self.account,
            kSecAttrAccessGroup as String: accessGroup,
            kSecUseDataProtectionKeychain as String: true,
        ]
    }

    func loadKeyRing() throws -> DeviceKeyRing? {
        var query = baseQuery
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        switch status {
        case errSecSuccess:
            guard let data = item as? Data else {
                throw SealedPushError(.keyStoreCorrupt, "the keychain item holds no data")
            }
            var bytes = [UInt8](data)
            defer { for index in bytes.indices { bytes[index] = 0 } }
            return try DeviceKeyRing(fileBytes: bytes)
        case errSecItemNotFound:
            if isReadOnly {
                throw SealedPushError(.keysUnavailable, "no key ring in the keychain; the app must create it first")
            }
            return nil
        case errSecInteractionNotAllowed:
            throw SealedPushError(.keysUnavailable, "the keychain is locked (device not unlocked since boot)")
        default:
            throw SealedPushError(.keysUnavailable, "keychain read failed with OSStatus \(status)")
        }
    }

    func update<T>(_ body: (inout DeviceKeyRing?) throws -> T) throws -> T {
        guard !isReadOnly else {
            throw SealedPushError(.invalidArgument, "the extension's key store is read-only")
        }
        // Only the app writes; serialize its own threads. (The keychain replaces an item atomically.)
        Self.writeLock.lock()
        defer { Self.writeLock.unlock() }
        let before = try loadKeyRing()
        var ring = before
        let result = try body(&ring)
        guard let ring else {
            if before != nil {
                throw SealedPushError(.invalidArgument, "a key ring cannot be deleted through update")
            }
            return result
        }
        // Unchanged (same keys, same times): leave the item alone, as FileKeyStore does.
        if let before, before.keys.map(\.keyID) == ring.keys.map(\.keyID),
            before.keys.map(\.retiredAt) == ring.keys.map(\.retiredAt)
        {
            return result
        }
        var bytes = ring.fileBytes()
        defer { for index in bytes.indices { bytes[index] = 0 } }
        let data = Data(bytes)
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status: OSStatus
        if before == nil {
            status = SecItemAdd(baseQuery.merging(attributes) { $1 } as CFDictionary, nil)
        } else {
            status = SecItemUpdate(baseQuery as CFDictionary, attributes as CFDictionary)
        }
        guard status == errSecSuccess else {
            throw SealedPushError(.io, "keychain write failed with OSStatus \(status)")
        }
        return result
    }
}

// MARK: - The extension

nonisolated final class NotificationService: UNNotificationServiceExtension {
    /// One step for the extension's lifetime, built once: `didReceive` and the expiry call (which the system makes
    /// on another thread) read the same immutable reference, with no data race and no per-request replacement.
    /// The step itself tracks every pending request.
    private let step: Result<NotificationServiceStep, SetupProblem> = NotificationService.makeStep()

    override func didReceive(
        _ request: UNNotificationRequest,
        withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let original = request.content
        // UNNotificationContent is not Sendable: hand the handler over through a box the step calls exactly once.
        let deliver = ContentHandlerBox(original: original, handler: contentHandler)
        switch step {
        case .failure(let problem):
            // Misconfiguration is never silent: it is counted, and the sender's placeholder is shown.
            Metrics.recordSetupProblem(problem)
            deliver(NotificationDeliveryFallback.original)
        case .success(let step):
            step.didReceive(NotificationRequest(userInfo: original.userInfo, identifier: request.identifier)) { delivery in
                deliver(delivery)
            }
        }
    }

    override func serviceExtensionTimeWillExpire() {
        // Delivers the best attempt (decrypted content if already available, else the fallback) exactly once,
        // for every pending request.
        if case .success(let step) = step { step.serviceExtensionTimeWillExpire() }
    }

    /// Why the step could not be built, or runs degraded; reported to metrics, never swallowed.
    enum SetupProblem: Error {
        /// A pinned server key in `SealedPushConfig.serverPublicKeys` does not parse (index in the list).
        case malformedPinnedKey(index: Int)
        /// The receiver refused its configuration (topic, keys).
        case receiver(SealedPushError)
    }

    private static func makeStep() -> Result<NotificationServiceStep, SetupProblem> {
        var serverKeys: [[UInt8]] = []
        for (index, text) in SealedPushConfig.serverPublicKeys.enumerated() {
            // A malformed pinned key is a build mistake: surface it instead of dropping it with try?.
            guard let key = try? KeyText.decodePublicKey(text) else { return .failure(.malformedPinnedKey(index: index)) }
            serverKeys.append(key)
        }
        // Without the app group container there is no replay state: the step still opens messages, but every
        // outcome is reported with `replayGuard: false` so the missing entitlement shows up in metrics.
        let stateDirectory = SealedPushConfig.stateDirectory
        let replayGuard = stateDirectory.map { FileReplayGuard(directory: $0) }
        let receiver: SealedPushReceiver
        do {
            receiver = try SealedPushReceiver(
                keyStore: KeychainKeyStore(accessGroup: SealedPushConfig.keychainAccessGroup, isReadOnly: true),
                replayGuard: replayGuard,
                serverPublicKeys: serverKeys,
                topic: SealedPushConfig.topic
            )
        } catch let error as SealedPushError {
            return .failure(.receiver(error))
        } catch {
            return .failure(.receiver(SealedPushError(.invalidArgument, "receiver setup failed")))
        }
        let hasReplayGuard = replayGuard != nil
        // Attachments and content sent by reference: downloaded with URLSession within the step's deadline,
        // decrypted chunk by chunk into the app group (never a partial file left), the text delivered regardless.
        let attachments = SealedPushConfig.attachmentDirectory.map {
            AttachmentConfiguration(transport: URLSessionBlobTransport(), directory: $0)
        }
        return .success(NotificationServiceStep(
            receiver: receiver,
            configuration: .init(
                deadline: .seconds(25),
                fallbackPlaceholder: SealedPushConfig.fallback,
                observer: { outcome in
                    // Metrics hook: the outcome carries no plaintext and no key material.
                    Metrics.record(outcome, replayGuard: hasReplayGuard)
                },
                attachments: attachments,
                reportObserver: { report in
                    // Which attachments arrived and which did not (an index, a code, a message): no content.
                    Metrics.record(report)
                },
                // An exact duplicate (outcome `.duplicate`, counted by the observer like any outcome) is shown again
                // or, with the filtering entitlement, suppressed.
                duplicates: SealedPushConfig.hasFilteringEntitlement ? .suppress : .deliverAgain,
                // Control messages (Specs/control-v1.md): remove and update act on delivered notifications; a remove
                // or badge shows nothing with the filtering entitlement, else a quiet placeholder (never old content).
                controls: ControlConfiguration(
                    center: SystemNotificationCenter(),
                    presentation: SealedPushConfig.hasFilteringEntitlement
                        ? .suppress : .quietPlaceholder(.localized(key: "NOTIFICATIONS_UPDATED"))),
                // Receipts (Specs/control-v1.md §4): sealed with the device key after the content handler, queued
                // in the app group, posted within the step's deadline; the app flushes what is left at launch.
                receipts: Self.receiptSender()
            )
        ))
    }

    /// The receipt sender, or nil (no app group: no queue, no receipts). Needs no entitlement beyond the app group
    /// and outgoing network, which an extension has.
    private static func receiptSender() -> ReceiptSender? {
        guard let queue = SealedPushConfig.stateDirectory?.appendingPathComponent("Receipts", isDirectory: true),
              let sealer = try? ReceiptSealer(
                keyStore: KeychainKeyStore(accessGroup: SealedPushConfig.keychainAccessGroup, isReadOnly: true),
                serverPublicKeys: SealedPushConfig.serverPublicKeys.compactMap { try? KeyText.decodePublicKey($0) },
                topic: SealedPushConfig.topic)
        else { return nil }
        return ReceiptSender(
            sealer: sealer, transport: URLSessionReceiptTransport(url: SealedPushConfig.receiptsURL),
            queueDirectory: queue)
    }
}

/// Marker for "show the request's own content" when the step could not even be built.
nonisolated enum NotificationDeliveryFallback { case original }

/// Turns a `NotificationDelivery` into `UNNotificationContent` and calls the system handler.
nonisolated final class ContentHandlerBox: @unchecked Sendable {
    private let original: UNNotificationContent
    private let handler: (UNNotificationContent) -> Void

    init(original: UNNotificationContent, handler: @escaping (UNNotificationContent) -> Void) {
        self.original = original
        self.handler = handler
    }

    func callAsFunction(_ fallback: NotificationDeliveryFallback) {
        handler(original)
    }

    func callAsFunction(_ delivery: NotificationDelivery) {
        switch delivery.content {
        case .original:
            handler(original)
        case .placeholder(let placeholder):
            handler(Self.content(for: placeholder, userInfo: original.userInfo))
        case .decrypted(let content):
            let mutable = Self.content(for: content, userInfo: original.userInfo)
            mutable.attachments = Self.notificationAttachments(delivery.attachments)
            handler(mutable)
        case .suppressed:
            // A duplicate suppressed (`DuplicateHandling.suppress`): an empty content, which iOS does not display
            // because the extension has the filtering entitlement.
            handler(UNNotificationContent())
        }
    }

    /// Maps decrypted files to `UNNotificationAttachment`. The step named each file with the extension iOS needs
    /// (`.jpg`, `.m4a`, `.mp4`, …); a file iOS refuses is skipped, the text is still shown.
    private static func notificationAttachments(_ files: [DeliveredAttachment]) -> [UNNotificationAttachment] {
        files.compactMap { file in
            var options: [String: Any] = [:]
            if file.isThumbnail { options[UNNotificationAttachmentOptionsThumbnailHiddenKey] = false }
            return try? UNNotificationAttachment(
                identifier: "sealedpush-\(file.index)", url: file.fileURL, options: options)
        }
    }

    private static func content(for placeholder: Placeholder, userInfo: [AnyHashable: Any]) -> UNNotificationContent {
        let content = UNMutableNotificationContent()
        switch placeholder.alert {
        case .text(let title, let body):
            content.title = title ?? ""
            content.body = body
        case .localized(let key, let args):
            content.body = NSString.localizedUserNotificationString(forKey: key, arguments: args)
        }
        if let sound = placeholder.sound {
            content.sound = sound == "default" ? .default : UNNotificationSound(named: UNNotificationSoundName(sound))
        }
        content.userInfo = userInfo
        return content
    }

    private static func content(for decrypted: NotificationContent, userInfo: [AnyHashable: Any]) -> UNMutableNotificationContent {
        let content = UNMutableNotificationContent()
        content.title = decrypted.title ?? ""
        content.subtitle = decrypted.subtitle ?? ""
        content.body = decrypted.body ?? ""
        if let badge = decrypted.badge { content.badge = NSNumber(value: badge) }
        if let sound = decrypted.sound {
            content.sound = sound == "default" ? .default : UNNotificationSound(named: UNNotificationSoundName(sound))
        }
        if let threadID = decrypted.threadID { content.threadIdentifier = threadID }
        if let category = decrypted.category { content.categoryIdentifier = category }
        if let level = decrypted.interruptionLevel {
            switch level {
            case .passive: content.interruptionLevel = .passive
            case .active: content.interruptionLevel = .active
            case .timeSensitive: content.interruptionLevel = .timeSensitive
            case .critical: content.interruptionLevel = .critical
            }
        }
        if let score = decrypted.relevanceScore { content.relevanceScore = score }
        if let target = decrypted.targetContentID { content.targetContentIdentifier = target }
        // Drop the opaque envelope; hand the app its data (still JSON text, parse it in the app) and the sender's
        // notification id, which later control messages find it by (control-v1 §1).
        var info = userInfo
        info["sp"] = nil
        if let id = decrypted.notificationID { info[NotificationControl.userInfoKey] = id }
        if let data = decrypted.data {
            var writer = JSONWriter()
            writer.value(data)
            info["sealedPushData"] = String(decoding: writer.bytes, as: UTF8.self)
        }
        content.userInfo = info
        return content
    }
}

/// `UNUserNotificationCenter` as the step's control messages see it: delivered notifications with the SealedPush
/// notification id from their `userInfo`, removal by request identifier, the badge (iOS 16's `setBadgeCount`).
nonisolated struct SystemNotificationCenter: DeliveredNotificationCenter {
    func deliveredNotifications() async -> [DeliveredNotification] {
        await UNUserNotificationCenter.current().deliveredNotifications().map { notification in
            let request = notification.request
            return DeliveredNotification(
                requestIdentifier: request.identifier,
                notificationID: request.content.userInfo[NotificationControl.userInfoKey] as? String,
                threadIdentifier: request.content.threadIdentifier.isEmpty ? nil : request.content.threadIdentifier)
        }
    }

    func removeDeliveredNotifications(withIdentifiers identifiers: [String]) async {
        UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers: identifiers)
    }

    func setBadgeCount(_ count: Int) async throws {
        try await UNUserNotificationCenter.current().setBadgeCount(count)
    }
}

/// Stand-in for the app's metrics.
nonisolated enum Metrics {
    /// One notification's outcome (`.decrypted`, `.duplicate(handling)` for a backend's resend, or
    /// `.fallback(reason)`); `replayGuard` is false when the app group container is missing (entitlement).
    static func record(_ outcome: NotificationOutcome, replayGuard: Bool) {}
    /// Attachments that did not arrive, and why (no content).
    static func record(_ report: NotificationReport) {}
    /// The extension could not be set up (a malformed pinned key, a bad topic).
    static func recordSetupProblem(_ problem: NotificationService.SetupProblem) {}
}

// MARK: - App side (in the app target, not the extension)

/// Call at launch and whenever you rotate; send the returned registration to your backend.
nonisolated func registerDevice(now: Date = Date()) throws -> DeviceRegistration {
    let store = KeychainKeyStore(accessGroup: SealedPushConfig.keychainAccessGroup, isReadOnly: false)
    let manager = DeviceKeyManager(store: store)
    let seconds = UInt64(max(0, now.timeIntervalSince1970))
    for directory in [SealedPushConfig.stateDirectory, SealedPushConfig.attachmentDirectory].compactMap({ $0 }) {
        // The replay guard and the attachment step never create their directories: the app does, once.
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication]
        )
    }
    let registration = try manager.createIfNeeded(now: seconds)   // never replaces a corrupt key ring
    _ = try manager.prune(now: seconds)                            // drop keys past the 30-day grace window
    return registration
}
