import ArgumentParser

/// `sealed-push blobs`: the encrypted blob store (attachments and content by reference).
struct BlobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blobs",
        abstract: "Work with a directory of encrypted blobs (attachments, content by reference).",
        subcommands: [BlobsServeCommand.self])
}
