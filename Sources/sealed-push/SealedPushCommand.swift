import ArgumentParser
import SealedPushCommandLine
import SealedPushCore

@main
struct SealedPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sealed-push",
        abstract: "End-to-end encrypted push notifications: keys, sealing, opening, delivery.",
        version: SealedPushVersion.current,
        subcommands: [
            KeygenCommand.self, SealCommand.self, OpenCommand.self, InspectCommand.self, DeviceCommand.self,
            APNsKeygenCommand.self, EmulatorCommand.self, SendCommand.self, DemoCommand.self, BlobsCommand.self,
            FCMEmulatorCommand.self, FCMSendCommand.self, ReceiptCommand.self, SealReceiptsCommand.self,
        ]
    )

    /// Names a mistyped command word (and the nearest command) before ArgumentParser, which would report the first
    /// option it cannot place instead; then runs the command line.
    static func main() async {
        UnknownCommandCheck.exitIfUnknown(root: Self.self)
        await main(nil)
    }
}
