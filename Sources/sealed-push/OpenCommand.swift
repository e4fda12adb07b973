import ArgumentParser
import Foundation
import SealedPushClient
import SealedPushClientNIO
import SealedPushCore
import SealedPushServer

/// `sealed-push open`: open an APNs body on the device side and print the content as JSON.
struct OpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open an APNs JSON body and print the content as JSON.",
        discussion: """
            With --keyring the device key ring is opened read-only and a replay guard is kept in the same \
            directory, also across restarts. Opening the very same payload again within --duplicate-window seconds \
            of its first opening (device time) is a duplicate, as a sender's resend is: the content is printed \
            again (or nothing, with --suppress-duplicates) and `duplicate` is said on stderr, exit status 0. After \
            the window, or for a different envelope reusing a message id, it reports `replayed`. On any failure the \
            error code and message go to stderr, no plaintext is printed, and the exit status is 1.
            """)

    @Option(name: .customLong("device-key"), help: "A device private key file (repeatable).")
    var deviceKeys: [String] = []

    @Option(help: "A device key ring directory (from `device init`), opened read-only, with a replay guard.")
    var keyring: String?

    @Option(name: .customLong("server-public"), help: "A pinned server public key SPK1:… (repeatable).")
    var serverPublic: [String] = []

    @Option(help: "The APNs topic (the app's bundle id).")
    var topic: String

    @Option(help: ArgumentHelp(
        "A file holding the APNs JSON body; `-` or omitted reads standard input.", valueName: "file"))
    var payload: String?

    @Option(help: "The time to check expiry against: ISO 8601 or UNIX seconds (default: now).")
    var now: String?

    @Option(help: ArgumentHelp(
        "With --keyring: fetch attachments (and content sent by reference) into this directory, as the extension "
            + "does; files are printed to stderr, failures named.", valueName: "dir"))
    var attachmentsDir: String?

    @Option(help: "With --attachments-dir: the time allowed for opening and fetching, in seconds (default 25).")
    var deadline: Int = 25

    @Option(help: ArgumentHelp(
        "With --keyring: how long after its first opening an exact copy of a payload is a duplicate, not a replay "
            + "(seconds; 0 turns it off; default 600).", valueName: "seconds"))
    var duplicateWindow: UInt64 = FileReplayGuard.defaultDuplicateWindow

    @Flag(help: "With --keyring: print nothing for a duplicate (as an extension with the filtering entitlement).")
    var suppressDuplicates = false

    @Option(help: ArgumentHelp(
        "With --keyring: also write a receipt (Specs/control-v1.md §4) for the opened payload, sealed by the device key "
            + "to the server key that sent it, as one base64url line.", valueName: "file"))
    var receiptOut: String?

    @Option(help: ArgumentHelp(
        "With --keyring: a JSON file standing in for the phone's notification center (created if missing): a "
            + "decrypted notification is added to it, and control messages (remove, update, badge) act on it as the "
            + "extension's step does on iOS.", valueName: "file"))
    var notificationCenter: String?

    @Option(help: .hidden)  // The replay journal's compaction length (keyring-v1 §5.4.3); the crash tests shorten it.
    var replayJournalLimit: Int = FileReplayGuard.defaultJournalLimit

    func validate() throws {
        guard deviceKeys.isEmpty != (keyring == nil) else {
            throw ValidationError("give either --keyring DIR or one or more --device-key FILE")
        }
        guard !serverPublic.isEmpty else { throw ValidationError("give at least one --server-public SPK1:… key") }
        if attachmentsDir != nil, keyring == nil { throw ValidationError("--attachments-dir needs --keyring") }
        if notificationCenter != nil, keyring == nil { throw ValidationError("--notification-center needs --keyring") }
        if receiptOut != nil, keyring == nil { throw ValidationError("--receipt-out needs --keyring") }
        if keyring == nil, suppressDuplicates || duplicateWindow != FileReplayGuard.defaultDuplicateWindow {
            throw ValidationError("--duplicate-window and --suppress-duplicates need --keyring")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let serverKeys = try serverPublic.map(KeyText.decodePublicKey)
            let body = try CLIIO.readPayload(payload)
            let time = try CLIIO.parseNow(now)
            let opened: OpenedNotification
            if let keyring, attachmentsDir != nil || notificationCenter != nil {
                // The extension's own path: the step, with attachments and content references fetched, control
                // messages applied to the notification center file.
                let receiver = try SealedPushReceiver(
                    directory: URL(fileURLWithPath: keyring), serverPublicKeys: serverKeys, topic: topic,
                    clock: .fixed(time), duplicateWindow: duplicateWindow, replayJournalLimit: replayJournalLimit)
                var attachments: AttachmentConfiguration?
                if let attachmentsDir {
                    let directory = URL(fileURLWithPath: attachmentsDir)
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                            attributes: [.posixPermissions: 0o700])
                    attachments = AttachmentConfiguration(transport: NIOBlobTransport(), directory: directory)
                }
                let center = notificationCenter.map(FileNotificationCenter.init(path:))
                let step = NotificationServiceStep(receiver: receiver, configuration: .init(
                    deadline: .seconds(deadline), attachments: attachments,
                    duplicates: suppressDuplicates ? .suppress : .deliverAgain,
                    controls: center.map { ControlConfiguration(center: $0, presentation: .suppress) }))
                let request = NotificationRequest(body: body)
                let delivery = await withCheckedContinuation { continuation in
                    step.didReceive(request) { continuation.resume(returning: $0) }
                }
                if let receiptOut {
                    try writeReceipt(
                        about: body, outcome: delivery.outcome, attachments: (delivery.attachments.count, delivery.attachmentFailures.count),
                        keyring: keyring, serverKeys: serverKeys, time: time, to: receiptOut)
                }
                if case .control(let kind) = delivery.outcome, let center {
                    // A remove or badge shows nothing of its own: say what it did to the center.
                    CLIIO.writeStderr("control \(kind.rawValue): applied; \(center.summary)\n")
                    return
                }
                if delivery.content == .suppressed, delivery.outcome == .duplicate(.suppress) {
                    CLIIO.writeStderr("duplicate: an exact copy of a payload opened moments ago; suppressed\n")
                    return
                }
                guard case .decrypted(let content) = delivery.content,
                    delivery.outcome == .decrypted || delivery.outcome == .duplicate(.deliverAgain)
                else {
                    let reason = if case .fallback(let reason) = delivery.outcome { reason.rawValue } else { "none" }
                    throw SealedPushError(
                        delivery.errorCode ?? .deadlineExceeded, "the step fell back (\(reason)); no plaintext shown")
                }
                if delivery.outcome == .duplicate(.deliverAgain) {
                    CLIIO.writeStderr("duplicate: an exact copy of a payload opened moments ago; delivered again\n")
                }
                for attachment in delivery.attachments {
                    CLIIO.writeStderr("attachment \(attachment.index): \(attachment.fileURL.path)"
                        + " (\(attachment.mediaType.mimeType)\(attachment.isThumbnail ? ", thumbnail" : ""))\n")
                }
                for failure in delivery.attachmentFailures { CLIIO.writeStderr("not delivered: \(failure)\n") }
                if let center {
                    let id = content.notificationID ?? Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) })
                    try center.add(
                        DeliveredNotification(requestIdentifier: id, notificationID: content.notificationID,
                                              threadIdentifier: content.threadID))
                    CLIIO.writeStderr("shown; \(center.summary)\n")
                }
                CLIIO.writeStdout(String(decoding: try content.canonicalJSON(), as: UTF8.self) + "\n")
                return
            } else if let keyring {
                let receiver = try SealedPushReceiver(
                    directory: URL(fileURLWithPath: keyring), serverPublicKeys: serverKeys, topic: topic,
                    clock: .fixed(time), duplicateWindow: duplicateWindow, replayJournalLimit: replayJournalLimit)
                opened = try receiver.open(body: body)
                if let receiptOut {
                    // What the device reports back (control-v1 §4): decrypted or duplicate, sealed to the sender.
                    try writeReceipt(
                        about: body, outcome: opened.isDuplicate ? .duplicate(.deliverAgain) : .decrypted,
                        keyring: keyring, serverKeys: serverKeys, time: time, to: receiptOut)
                }
                if case .duplicate(let firstAcceptedAt) = opened.replayVerdict {
                    CLIIO.writeStderr("duplicate: an exact copy of the payload first opened at \(CLIIO.iso(firstAcceptedAt)), "
                        + "within the \(duplicateWindow)-second window; "
                        + (suppressDuplicates ? "suppressed\n" : "delivered again\n"))
                    if suppressDuplicates { return }
                }
            } else {
                var privateKeys: [[UInt8]] = []
                defer {
                    for index in privateKeys.indices { Sodium.wipe(&privateKeys[index]) }
                }
                for path in deviceKeys { privateKeys.append(try Self.readDeviceKey(path)) }
                let opener = try EnvelopeOpener(devicePrivateKeys: privateKeys, serverPublicKeys: serverKeys, topic: topic)
                opened = try opener.open(body: body, now: time)
            }
            CLIIO.writeStdout(String(decoding: try opened.content.canonicalJSON(), as: UTF8.self) + "\n")
        }
    }

    /// The longest file accepted as a device private key file (the format is 50 bytes; as `ServerIdentity` reads
    /// `--server-key`).
    static let maximumKeyFileLength = 256

    /// Reads a `--device-key` file the way `--server-key` is read (`KeyFile.read`: opened non-blocking, a regular
    /// file only, at most ``maximumKeyFileLength`` bytes), so a FIFO fails at once instead of hanging.
    ///
    /// - Parameter path: The device private key file.
    /// - Returns: The raw 32-byte private key (the caller wipes it).
    /// - Throws: `SealedPushError` `io` (missing, unreadable, not a regular file) or `invalidKey` (not a key file),
    ///   its message naming `path`, never the contents.
    static func readDeviceKey(_ path: String) throws -> [UInt8] {
        var contents = try KeyFile.read(path: path, limit: maximumKeyFileLength)
        defer { Sodium.wipe(&contents) }
        do {
            return try KeyText.decodePrivateKeyFile(contents)
        } catch let error as SealedPushError {
            throw SealedPushError(error.code, "\(path) is not a SealedPush private key file: \(error.message)")
        }
    }

    /// Writes the receipt the step's outcome calls for (control-v1 §4), sealed by the device key the payload was
    /// sealed to, as one base64url line.
    private func writeReceipt(
        about body: [UInt8], outcome: NotificationOutcome, attachments: (delivered: Int, failed: Int) = (0, 0),
        keyring: String, serverKeys: [[UInt8]], time: UInt64, to path: String
    ) throws {
        let envelope = try NotificationRequest.envelope(ofBody: body)
        let header = try EnvelopeHeader(parsing: envelope[0..<EnvelopeV1.headerLength])
        let sealer = try ReceiptSealer(
            keyStore: FileKeyStore(directory: URL(fileURLWithPath: keyring), access: .readOnly),
            serverPublicKeys: serverKeys, topic: topic)
        let receipt = DeliveryReceipt(
            messageID: header.messageID, outcome: ReceiptSender.outcome(outcome),
            attachmentsDelivered: min(attachments.delivered, 8), attachmentsFailed: min(attachments.failed, 8), deviceTime: time)
        let sealed = try sealer.seal(receipt, deviceKeyID: header.recipientKeyID, serverKeyID: header.senderKeyID, now: time)
        // As key files are written: a temporary file in the same directory, fsync, then rename over the path (a
        // symbolic link there is replaced, its target never written; a reader sees the old receipt or the new one).
        let line = Array((Base64URL.encode(sealed) + "\n").utf8)
        try KeyFile.writeAtomically(line, toPath: path, replacingExisting: true)
    }
}
