import ArgumentParser
import Foundation
import SealedPushClient
import SealedPushCore

/// `sealed-push seal-receipts`: the device's side of receipts in bulk (`Specs/control-v1.md` §4) — what a load test
/// posts to a gateway's receipt endpoint: one `decrypted` receipt per message id, sealed by a key ring's current
/// key to the server identity.
struct SealReceiptsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal-receipts",
        abstract: "Seal a `decrypted` receipt for each message id, as the device with this key ring would.",
        discussion: """
            Reads message ids (32 lowercase hex digits, one per line) and writes the receipts back to back, \
            354 bytes each, to --out (0600). Progress goes to stderr every 10,000 receipts.
            """)

    @Option(help: "The device key ring directory (from `device init`), read only.")
    var keyring: String

    @Option(name: .customLong("server-public"), help: "The pinned server public key SPK1:… the receipts are sealed to.")
    var serverPublic: String

    @Option(help: "The app's topic (bundle id or Android application id).")
    var topic: String

    @Option(name: .customLong("message-ids"), help: ArgumentHelp("A file of message ids, one per line.", valueName: "file"))
    var messageIDs: String

    @Option(help: ArgumentHelp("Where the receipts go (created 0600).", valueName: "file"))
    var out: String

    func run() async throws {
        try await runReportingErrors {
            let serverKey = try KeyText.decodePublicKey(serverPublic)
            let store = FileKeyStore(directory: URL(fileURLWithPath: keyring), access: .readOnly)
            guard let ring = try store.loadKeyRing(), let key = ring.keys.last(where: { $0.retiredAt == nil }) ?? ring.keys.last
            else { throw SealedPushError(.keysUnavailable, "no key ring in \(keyring)") }
            let sealer = try ReceiptSealer(keyStore: store, serverPublicKeys: [serverKey], topic: topic)
            let serverKeyID = try KeyID.derived(fromPublicKey: serverKey)
            let ids = try CLIIO.read(messageIDs, limit: 64 << 20, what: "--message-ids")
            let lines = String(decoding: ids, as: UTF8.self)
                .split(whereSeparator: \.isNewline)
            let now = UInt64(Date().timeIntervalSince1970)
            var output: [UInt8] = []
            output.reserveCapacity(lines.count * DeliveryReceipt.maximumEnvelopeLength)
            for (index, line) in lines.enumerated() {
                let messageID = try Hex.decode(String(line).trimmingCharacters(in: .whitespaces))
                output += try sealer.seal(
                    DeliveryReceipt(messageID: messageID, outcome: .decrypted, deviceTime: now),
                    deviceKeyID: key.keyID, serverKeyID: serverKeyID, now: now)
                if (index + 1) % 10_000 == 0 { CLIIO.writeStderr("\(index + 1) of \(lines.count) sealed\n") }
            }
            guard FileManager.default.createFile(atPath: out, contents: Data(output), attributes: [.posixPermissions: 0o600])
            else { throw SealedPushError(.io, "cannot write \(out)") }
            CLIIO.writeStderr("\(lines.count) receipts in \(out)\n")
        }
    }
}
