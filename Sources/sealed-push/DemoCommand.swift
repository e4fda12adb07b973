import ArgumentParser
import Foundation
import Logging
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushBlobServer
import SealedPushClient
import SealedPushClientNIO
import SealedPushCore
import SealedPushServer

/// `sealed-push demo`: the whole path on loopback with embedded defaults.
///
/// APNs emulator (TLS + HTTP/2) → server identity and device key ring → seal → send with a provider token →
/// take what the emulator delivered → the notification-service step on the device side → the decrypted content;
/// then an encrypted image: a blob server on loopback, the image sealed as a blob, the step downloading and
/// decrypting it into a file next to the text.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the whole path on loopback: emulator, seal, send over TLS + HTTP/2, open on the device.")

    @Option(help: "The notification title.")
    var title = "Dinner tonight?"

    @Option(help: "The notification body.")
    var body = "Table for two at 19:30 — the place with the blue door. 🍜"

    @Option(help: "The APNs topic (bundle id) of the demo app.")
    var topic = "com.example.sealedpush.demo"

    @Option(help: "Keep the demo's keys and records in this directory (a fresh temporary one by default).")
    var workdir: String?

    func run() async throws {
        try await runReportingErrors { try await demo() }
    }

    private func demo() async throws {
        let directory = URL(fileURLWithPath: workdir ?? NSTemporaryDirectory())
            .appendingPathComponent(workdir == nil ? "sealed-push-demo-\(UUID().uuidString.prefix(8))" : "")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let clock = ContinuousClock()
        var logger = Logger(label: "sealedpush.demo")
        logger.logLevel = .error
        say("SealedPush demo — everything on loopback, files in \(directory.path)")

        // 1. Apple's side: a provider-token key and the APNs emulator.
        let keyID = "DEMOKEY001", teamID = "DEMOTEAM01"
        try APNsKeyGenerator.writeNewKey(to: path("AuthKey_\(keyID).p8"))
        let authKeyPEM = try String(contentsOfFile: path("AuthKey_\(keyID).p8"), encoding: .utf8)
        let deviceToken = try DeviceToken(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        var emulatorConfiguration = APNsEmulatorConfiguration(authKeyPEM: authKeyPEM, keyID: keyID, teamID: teamID)
        emulatorConfiguration.certificateOutputPath = path("emulator-cert.pem")
        emulatorConfiguration.allowedTopics = [topic]
        emulatorConfiguration.knownDeviceTokens = [deviceToken.hex]
        emulatorConfiguration.recordedNotificationsPerToken = 2  // the text and the photo notification
        let emulator = try APNsEmulator(configuration: emulatorConfiguration, logger: logger)
        try await emulator.start()
        say("1. APNs emulator on https://127.0.0.1:\(emulator.port) (TLS 1.2+, ALPN h2, self-signed certificate)")

        do {
            try await runPath(emulator: emulator, deviceToken: deviceToken, keyID: keyID, teamID: teamID,
                              path: path, directory: directory, clock: clock, logger: logger)
        } catch {
            await emulator.stop()
            throw error
        }
        await emulator.stop()
        if workdir == nil { try? FileManager.default.removeItem(at: directory) }
    }

    private func runPath(
        emulator: APNsEmulator, deviceToken: DeviceToken, keyID: String, teamID: String,
        path: (String) -> String, directory: URL, clock: ContinuousClock, logger: Logger
    ) async throws {
        // 2. The device: a key ring (what the app does once) and its registration for the backend.
        let keyringDirectory = directory.appendingPathComponent("device-keyring")
        let now = UInt64(Date().timeIntervalSince1970)
        let registration = try DeviceKeyManager(directory: keyringDirectory).create(now: now)
        say("2. device key ring created; registration sent to the backend: key id \(registration.keyId)")

        // 3. The backend: its identity, the device record, and sealing.
        let identity = try ServerIdentity.generate()
        try identity.write(toFile: path("server-identity.key"))
        var record = DeviceRecord()
        try record.register(registration)
        let sealer = try Sealer(identity: identity, topic: topic)
        let content = NotificationContent(
            title: title, body: body, badge: 1, sound: "default", threadID: "dinner-plans", category: "INVITE",
            interruptionLevel: .timeSensitive, data: .object(["reservation": .number(4217)]))
        var started = clock.now
        let sealed = try sealer.seal(content, to: record.currentKey(at: now), ttl: 3600, now: now)
        let sealTime = clock.now - started
        say("3. backend sealed for key \(sealed.recipientKeyID.hex) as server key \(identity.keyID.hex): "
            + "\(sealed.payload.count) of 4096 bytes, in \(format(sealTime))")

        // 3b. An encrypted image: a blob store served on loopback; the backend encrypts the file into it (the store
        // and the server only ever hold ciphertext) and puts the descriptor, with the blob key, in the content.
        let blobStore = try FileSystemBlobStore(directory: path("blobs"))
        let blobServer = BlobServer(store: blobStore)
        try await blobServer.start()
        defer { Task { await blobServer.stop() } }
        let image = DemoImage.png()
        let stored = try await blobStore.store(encryptor: BlobEncryptor(), bytes: image)
        let descriptor = try stored.encrypted.attachment(
            url: "http://127.0.0.1:\(blobServer.port)/\(stored.name.text)",
            mediaType: try AttachmentMediaType(mimeType: "image/png").orThrow(SealedPushError(.io, "no PNG type")),
            name: "table.png")
        let photo = NotificationContent(
            title: title, body: "The table, for reference 📷", threadID: "dinner-plans", attachments: [descriptor.jsonValue])
        let sealedPhoto = try sealer.seal(photo, to: record.currentKey(at: now), ttl: 3600, now: now)
        say("3b. a \(image.count)-byte PNG encrypted into blob \(stored.name.text.prefix(12))… "
            + "(\(stored.encrypted.ciphertextSize) bytes, served on http://127.0.0.1:\(blobServer.port)); its notification: "
            + "\(sealedPhoto.payload.count) bytes")

        // 4. Delivery over real TLS + HTTP/2 with an ES256 provider token.
        let issuer = try ProviderTokenIssuer(
            key: APNsSigningKey(contentsOfFile: path("AuthKey_\(keyID).p8")), keyID: keyID, teamID: teamID)
        var configuration = APNsClientConfiguration(
            endpoint: APNsEndpoint(host: "127.0.0.1", port: emulator.port),
            trustRoots: .pemFile(path("emulator-cert.pem")))
        configuration.requestTimeout = .seconds(10)
        let client = try APNsClient(configuration: configuration, tokenIssuer: issuer, logger: logger)
        started = clock.now
        let report = await client.send(APNsNotification(
            deviceToken: deviceToken, topic: topic, payload: sealed.payload, priority: .immediate,
            expiration: Date(timeIntervalSince1970: TimeInterval(sealed.expiresAt))))
        let sendTime = clock.now - started
        let photoReport = await client.send(APNsNotification(
            deviceToken: deviceToken, topic: topic, payload: sealedPhoto.payload, priority: .immediate,
            expiration: Date(timeIntervalSince1970: TimeInterval(sealedPhoto.expiresAt))))
        await client.shutdown()
        guard case .delivered(let apnsID) = report.result, case .delivered = photoReport.result else {
            throw SealedPushError(.io, "the emulator did not accept the notifications: \(report.result), \(photoReport.result)")
        }
        say("4. APNs accepted it: apns-id \(apnsID.uuidString.lowercased()), \(report.attempts) request, "
            + "in \(format(sendTime))")

        // 5. What APNs (and anyone logging pushes) sees: the placeholder and an opaque envelope.
        let recorded = emulator.recorder.notifications(for: deviceToken.hex).map(\.body)
        let delivered = try recorded.first { $0 == sealed.payload }
            .orThrow(SealedPushError(.io, "the emulator recorded nothing for the device"))
        let deliveredPhoto = try recorded.first { $0 == sealedPhoto.payload }
            .orThrow(SealedPushError(.io, "the emulator recorded no photo notification for the device"))
        let seen = String(decoding: delivered, as: UTF8.self)
        say("5. APNs saw: \(seen.prefix(110))…")
        let leaked = [title, body, "dinner-plans", "INVITE", "4217"].filter { seen.contains($0) }
        guard leaked.isEmpty else { throw SealedPushError(.io, "plaintext visible to APNs: \(leaked)") }

        // 6. The device's notification-service step (read-only key ring, replay guard, 25 s deadline).
        let receiver = try SealedPushReceiver(
            directory: keyringDirectory, serverPublicKeys: [identity.publicKey], topic: topic)
        let step = NotificationServiceStep(
            receiver: receiver, configuration: .init(fallbackPlaceholder: .text(body: "New notification")))
        started = clock.now
        let delivery = await withCheckedContinuation { continuation in
            step.didReceive(NotificationRequest(body: delivered)) { continuation.resume(returning: $0) }
        }
        let openTime = clock.now - started
        guard case .decrypted(let opened) = delivery.content else {
            throw SealedPushError(.authenticationFailure, "the device fell back: \(delivery.outcome)")
        }
        say("6. the extension step opened it in \(format(openTime)) (outcome: \(describe(delivery.outcome))):")
        say("   title:    \(opened.title ?? "")")
        say("   body:     \(opened.body ?? "")")
        say("   badge \(opened.badge.map(String.init) ?? "-"), sound \(opened.sound ?? "-"), "
            + "thread \(opened.threadID ?? "-"), category \(opened.category ?? "-"), "
            + "level \(opened.interruptionLevel?.rawValue ?? "-")")
        guard opened == content else { throw SealedPushError(.malformedContent, "the opened content differs") }

        // 7. The photo: the extension step downloads the blob with the time it has left, decrypts it chunk by chunk
        // into a file in the app group (here: the work directory), and delivers it with the text.
        let attachmentDirectory = directory.appendingPathComponent("attachments")
        try FileManager.default.createDirectory(at: attachmentDirectory, withIntermediateDirectories: true)
        let photoStep = NotificationServiceStep(receiver: receiver, configuration: .init(
            fallbackPlaceholder: .text(body: "New notification"),
            attachments: AttachmentConfiguration(transport: NIOBlobTransport(), directory: attachmentDirectory)))
        started = clock.now
        let photoDelivery = await withCheckedContinuation { continuation in
            photoStep.didReceive(NotificationRequest(body: deliveredPhoto)) { continuation.resume(returning: $0) }
        }
        let photoTime = clock.now - started
        guard case .decrypted(let openedPhoto) = photoDelivery.content, let file = photoDelivery.attachments.first,
            photoDelivery.attachmentFailures.isEmpty
        else {
            throw SealedPushError(
                .io, "the photo did not arrive: \(photoDelivery.outcome) \(photoDelivery.attachmentFailures)")
        }
        guard try Data(contentsOf: file.fileURL) == Data(image) else {
            throw SealedPushError(.blobAuthenticationFailure, "the decrypted image differs from the original")
        }
        say("7. the step opened the photo notification and fetched its image in \(format(photoTime)):")
        say("   body:     \(openedPhoto.body ?? "")")
        say("   image:    \(file.fileURL.lastPathComponent) (\(image.count) bytes, \(file.mediaType.mimeType), "
            + "identical to the original) — ready for UNNotificationAttachment")

        // 8. The same push again moments later (a gateway's resend after an ambiguous failure): an exact duplicate,
        // so the same content is shown again, never the placeholder.
        let resend = await withCheckedContinuation { continuation in
            step.didReceive(NotificationRequest(body: delivered)) { continuation.resume(returning: $0) }
        }
        guard resend.content == delivery.content else {
            throw SealedPushError(.replayed, "the resend did not show the same content: \(resend.outcome)")
        }
        say("8. the same push again moments later (a resend) → \(describe(resend.outcome)) (same content shown)")
        // 9. The same push replayed after the duplicate window: the replay guard refuses it, the placeholder shows.
        let later = try SealedPushReceiver(
            directory: keyringDirectory, serverPublicKeys: [identity.publicKey], topic: topic,
            clock: .fixed(now + FileReplayGuard.defaultDuplicateWindow + 60))
        let laterStep = NotificationServiceStep(
            receiver: later, configuration: .init(fallbackPlaceholder: .text(body: "New notification")))
        let replay = await withCheckedContinuation { continuation in
            laterStep.didReceive(NotificationRequest(body: delivered)) { continuation.resume(returning: $0) }
        }
        say("9. the same push replayed 11 minutes later → \(describe(replay.outcome)) (placeholder shown)")
        say("done: sealed \(format(sealTime)), sent \(format(sendTime)), opened \(format(openTime)); "
            + "payload \(sealed.payload.count) bytes")
    }

    private func say(_ line: String) { CLIIO.writeStdout(line + "\n") }

    private func describe(_ outcome: NotificationOutcome) -> String {
        switch outcome {
        case .decrypted: "decrypted"
        case .duplicate(let handling): "duplicate (\(handling.rawValue))"
        case .fallback(let reason): "fallback: \(reason.rawValue)"
        case .control(let kind): "control (\(kind.rawValue))"
        }
    }

    private func format(_ duration: Duration) -> String {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return String(format: "%.2f ms", milliseconds)
    }
}

extension Optional {
    fileprivate func orThrow(_ error: @autoclosure () -> some Error) throws -> Wrapped {
        guard let value = self else { throw error() }
        return value
    }
}
