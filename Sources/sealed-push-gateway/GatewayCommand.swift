import ArgumentParser
import SealedPushCommandLine
import SealedPushCore
import SealedPushGateway

/// `sealed-push-gateway`: the SealedPush gateway (issue 12) — an HTTP API that seals each notification to each
/// device's key at once and queues only sealed bodies.
@main
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sealed-push-gateway",
        abstract: "The SealedPush gateway: an end-to-end encrypted push service any backend can call over HTTP.",
        version: SealedPushVersion.current,
        subcommands: [
            InitCommand.self, ServeCommand.self, AppCommand.self, KeyCommand.self, IdentityCommand.self, StatusCommand.self,
            CheckCommand.self, BackupCommand.self, WebhookCommand.self,
        ])

    /// Names a mistyped command word (and the nearest command) before ArgumentParser, which would report the first
    /// option it cannot place instead; then runs the command line, as ArgumentParser's own `main` does, except that a
    /// store's error is printed as its message (`Error: cannot connect to PostgreSQL at …`).
    static func main() async {
        UnknownCommandCheck.exitIfUnknown(root: Self.self)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as GatewayStoreError {
            exit(withError: OperatorError(error.message))
        } catch {
            exit(withError: error)
        }
    }
}
