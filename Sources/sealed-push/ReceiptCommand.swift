import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushServer

/// `sealed-push receipt`: the backend's side of a receipt (`Specs/control-v1.md` §4): open one a device sealed to
/// this server identity and print what it reports.
struct ReceiptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt",
        abstract: "Open a device's sealed receipt with the server key and print what it reports as JSON.",
        discussion: """
            The receipt must be sealed to this server identity by the device key given with --device-public (the key \
            that received the notification) for --topic; anything else is refused with its error code \
            (authenticationFailure for a forgery or another app, unknownSenderKey for another device key, \
            unknownRecipientKey for another server identity, expired, malformedEnvelope).
            """)

    @Option(help: "The server identity key file (0600), as for `seal`.")
    var serverKey: String

    @Option(name: .customLong("device-public"), help: "A registered device public key SPK1:… (repeatable).")
    var devicePublic: [String] = []

    @Option(help: "The app's topic (bundle id or Android application id).")
    var topic: String

    @Option(help: ArgumentHelp("A file holding the receipt as one base64url line; `-` or omitted reads standard input.",
                               valueName: "file"))
    var receipt: String?

    @Option(help: "The time to check expiry against: ISO 8601 or UNIX seconds (default: now).")
    var now: String?

    func validate() throws {
        guard !devicePublic.isEmpty else { throw ValidationError("give at least one --device-public SPK1:… key") }
    }

    func run() async throws {
        try await runReportingErrors {
            let identity = try ServerIdentity(contentsOfFile: serverKey)
            var devices: [KeyID: [UInt8]] = [:]
            for text in devicePublic {
                let key = try KeyText.decodePublicKey(text)
                devices[try DevicePublicKey(rawRepresentation: key).keyID] = key
            }
            let text = String(decoding: try CLIIO.readPayload(receipt, what: "--receipt"), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let opened = try ReceiptOpener(identity: identity, topic: topic).open(
                try Base64URL.decode(text), devicePublicKey: { devices[$0] }, now: try CLIIO.parseNow(now))
            var members = opened.receipt.jsonObject
            members["device-key-id"] = .string(opened.deviceKeyID.hex)
            members["receipt-id"] = .string(Hex.encode(opened.receiptID))
            members["receipt-expires-at"] = .number(Double(opened.expiresAt))
            var writer = JSONWriter()
            writer.value(.object(members))
            CLIIO.writeStdout(String(decoding: writer.bytes, as: UTF8.self) + "\n")
        }
    }
}
