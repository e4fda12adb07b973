import ArgumentParser
import SealedPushCore
import SealedPushServer

/// `sealed-push seal`: seal content for one device and print the APNs JSON body.
struct SealCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal",
        abstract: "Seal notification content for one device and print the APNs JSON body.")

    @Option(help: "The server identity's private key file (from `keygen`).")
    var serverKey: String

    @Option(help: "The device public key (SPK1:…), as printed by `keygen` or `device init`.")
    var devicePublic: String

    @Option(help: "The APNs topic (the app's bundle id).")
    var topic: String

    @OptionGroup var seal: SealOptions

    @OptionGroup var blobs: AttachOptions

    func validate() throws {
        guard seal.hasContent else { throw ValidationError("give the content: --title/--body or --content FILE.json") }
    }

    func run() async throws {
        try await runReportingErrors {
            let identity = try ServerIdentity(contentsOfFile: serverKey)
            let sealer = try Sealer(identity: identity, topic: topic, placeholder: seal.placeholder)
            let device = try DevicePublicKey(text: devicePublic)
            var content = try seal.notificationContent()
            let sealed: SealedNotification
            if let (store, prefix) = try blobs.store() {
                let attached = try await blobs.attachments(
                    store: store, urlPrefix: prefix, existing: content.attachments?.count ?? 0)
                if !attached.isEmpty { content.attachments = (content.attachments ?? []) + attached }
                // Content over the budget goes by reference automatically.
                let overflow = try OverflowSealer(sealer: sealer, store: store, urlPrefix: prefix)
                sealed = try await overflow.seal(content, to: device, ttl: seal.ttl)
            } else {
                sealed = try sealer.seal(content, to: device, ttl: seal.ttl)
            }
            CLIIO.writeStdout(String(decoding: sealed.payload, as: UTF8.self) + "\n")
        }
    }
}
