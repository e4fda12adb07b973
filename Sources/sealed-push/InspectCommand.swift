import ArgumentParser
import Foundation
import SealedPushCore

/// `sealed-push inspect`: header fields, sizes and the remaining budget of an APNs body. Decrypts nothing.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show an APNs body's envelope header, byte sizes and remaining budget (decrypts nothing).")

    @Option(help: "The APNs JSON body (standard input when omitted).")
    var payload: String?

    func run() async throws {
        try await runReportingErrors {
            let body = try CLIIO.readPayload(payload)
            let envelopeBytes = try APNsPayload.extractEnvelope(fromBody: body)
            let envelope = try Envelope(parsing: envelopeBytes)
            let header = envelope.header
            let padded = envelope.ciphertext.count - EnvelopeV1.tagLength
            let bucket = Padding.buckets.contains(padded) ? "a v1 bucket" : "not a v1 bucket"
            let lines = [
                "version            \(header.version)",
                "suite              \(header.suite) (HPKE mode_auth, X25519, HKDF-SHA256, ChaCha20-Poly1305)",
                "recipient key id   \(header.recipientKeyID.hex)",
                "sender key id      \(header.senderKeyID.hex)",
                "message id         \(Hex.encode(header.messageID))",
                "issued at          \(CLIIO.iso(header.issuedAt)) (\(header.issuedAt))",
                "expires at         \(CLIIO.iso(header.expiresAt)) (\(header.expiresAt))",
                "lifetime           \(header.expiresAt - header.issuedAt) s",
                "enc                \(Hex.encode(header.enc))",
                "envelope           \(envelopeBytes.count) bytes (header 82, ciphertext \(envelope.ciphertext.count))",
                "padded plaintext   \(padded) bytes (\(bucket))",
                "APNs body          \(body.count) bytes of \(APNsPayload.maxBodyBytes)",
                "remaining budget   \(APNsPayload.maxBodyBytes - body.count) bytes",
            ]
            CLIIO.writeStdout(lines.joined(separator: "\n") + "\n")
        }
    }
}
