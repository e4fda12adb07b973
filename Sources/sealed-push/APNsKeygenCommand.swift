import ArgumentParser
import SealedPushCore
import SealedPushServer

/// `sealed-push apns-keygen --out KEY.p8`: a test APNs signing key in Apple's format.
struct APNsKeygenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-keygen",
        abstract: "Generate a test APNs token-signing key (P-256, PKCS#8 PEM, like Apple's .p8 files).",
        discussion: "For the emulator and tests. Real keys come from Apple's developer portal.")

    @Option(name: .long, help: "Where to write the key (mode 0600, written atomically).")
    var out: String

    @Flag(name: .long, help: "Replace an existing file.")
    var force = false

    /// An existing file or a failed write is `error: io: …` with exit status 1, as `keygen` reports it; not a usage
    /// error.
    func run() async throws {
        try await runReportingErrors {
            if !force { try CLIIO.refuseExistingOutput(out, option: "--out") }
            try APNsKeyGenerator.writeNewKey(to: out, overwrite: force)
            CLIIO.writeStdout("wrote \(out) (P-256 private key, PKCS#8 PEM, mode 0600)\n")
        }
    }
}
