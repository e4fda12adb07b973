import ArgumentParser
import SealedPushServer

/// `sealed-push keygen`: a new X25519 key (server identity or device key).
struct KeygenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Write a new X25519 private key file (0600, atomic) and print only its public key.")

    @Option(help: "Where to write the private key file. An existing file is never overwritten.")
    var out: String

    func run() async throws {
        try await runReportingErrors {
            let identity = try ServerIdentity.generate()
            try identity.write(toFile: out)
            CLIIO.writeStdout(identity.publicKeyText + "\n")
        }
    }
}
