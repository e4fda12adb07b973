import ArgumentParser

@main
struct SealedPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sealed-push",
        abstract: "End-to-end encrypted push notifications: keys, sealing, opening, delivery.",
        subcommands: [APNsKeygenCommand.self, EmulatorCommand.self, SendCommand.self]
    )
}
