import ArgumentParser
import Foundation
import SealedPushClient
import SealedPushCore

/// `sealed-push open`: open an APNs body on the device side and print the content as JSON.
struct OpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open an APNs JSON body and print the content as JSON.",
        discussion: """
            With --keyring the device key ring is opened read-only and a replay guard is kept in the same \
            directory: opening the same payload twice reports `replayed`, also after a restart. On any failure the \
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

    func validate() throws {
        guard deviceKeys.isEmpty != (keyring == nil) else {
            throw ValidationError("give either --keyring DIR or one or more --device-key FILE")
        }
        guard !serverPublic.isEmpty else { throw ValidationError("give at least one --server-public SPK1:… key") }
    }

    func run() async throws {
        try await runReportingErrors {
            let serverKeys = try serverPublic.map(KeyText.decodePublicKey)
            let body = try CLIIO.readPayload(payload)
            let time = try CLIIO.parseNow(now)
            let opened: OpenedNotification
            if let keyring {
                let receiver = try SealedPushReceiver(
                    directory: URL(fileURLWithPath: keyring), serverPublicKeys: serverKeys, topic: topic,
                    clock: .fixed(time))
                opened = try receiver.open(body: body)
            } else {
                var privateKeys: [[UInt8]] = []
                for path in deviceKeys {
                    privateKeys.append(try KeyText.decodePrivateKeyFile(CLIIO.read(path, limit: 4096, what: "device key")))
                }
                let opener = try EnvelopeOpener(devicePrivateKeys: privateKeys, serverPublicKeys: serverKeys, topic: topic)
                for index in privateKeys.indices {
                    privateKeys[index].withUnsafeMutableBufferPointer { $0.update(repeating: 0) }  // opener has its copy
                }
                opened = try opener.open(body: body, now: time)
            }
            CLIIO.writeStdout(String(decoding: try opened.content.canonicalJSON(), as: UTF8.self) + "\n")
        }
    }
}
