import ArgumentParser
import SealedPushCommandLine

/// `sealed-push-gateway`: the SealedPush gateway (issue 12) — an HTTP API that seals each notification to each
/// device's key at once and queues only sealed bodies.
@main
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sealed-push-gateway",
        abstract: "The SealedPush gateway: an end-to-end encrypted push service any backend can call over HTTP.",
        subcommands: [
            InitCommand.self, ServeCommand.self, AppCommand.self, KeyCommand.self, IdentityCommand.self, BackupCommand.self,
        ])

    /// Names a mistyped command word (and the nearest command) before ArgumentParser, which would report the first
    /// option it cannot place instead; then runs the command line.
    static func main() async {
        UnknownCommandCheck.exitIfUnknown(root: Self.self)
        await main(nil)
    }
}
