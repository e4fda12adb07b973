import ArgumentParser
import Foundation
import SealedPushClient
import SealedPushCore

/// `sealed-push device`: the device key ring (what the app, never the extension, does).
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Create, rotate and prune a device key ring; inspect or reset its replay state.",
        subcommands: [Init.self, Rotate.self, Prune.self, ReplayState.self])

    struct KeyringOptions: ParsableArguments {
        @Option(help: "The key ring directory (created 0700; key ring file 0600).")
        var keyring: String

        @Option(help: "The current time: ISO 8601 or UNIX seconds (default: now).")
        var now: String?

        var manager: DeviceKeyManager { DeviceKeyManager(directory: URL(fileURLWithPath: keyring)) }
    }

    static func printRegistration(_ registration: DeviceRegistration) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        CLIIO.writeStdout(String(decoding: try encoder.encode(registration), as: UTF8.self) + "\n")
    }

    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key ring with one key and print its registration JSON for the backend.")
        @OptionGroup var options: KeyringOptions

        func run() async throws {
            try await runReportingErrors {
                try DeviceCommand.printRegistration(options.manager.create(now: CLIIO.parseNow(options.now)))
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new key current (the old one is kept for the grace window) and print its registration.")
        @OptionGroup var options: KeyringOptions

        func run() async throws {
            try await runReportingErrors {
                try DeviceCommand.printRegistration(options.manager.rotate(now: CLIIO.parseNow(options.now)))
            }
        }
    }

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove retired keys whose grace window has passed; print the removed key ids.")
        @OptionGroup var options: KeyringOptions

        func run() async throws {
            try await runReportingErrors {
                let removed = try options.manager.prune(now: CLIIO.parseNow(options.now))
                CLIIO.writeStdout(removed.map { "pruned \($0.hex)\n" }.joined())
                if removed.isEmpty { CLIIO.writeStdout("nothing to prune\n") }
            }
        }
    }

    struct ReplayState: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "replay-state",
            abstract: "Show the replay guard's state in a key ring directory, or reset it after an incident.",
            discussion: """
                Prints how many message ids are remembered and the times below which envelopes are refused \
                (`Specs/keyring-v1.md` §5). No message id or content is printed. --reset replaces the state with an \
                empty one: envelopes opened before and not yet expired could then open once more.
                """)
        @OptionGroup var options: KeyringOptions

        @Flag(help: "Forget every recorded message id and watermark.")
        var reset = false

        func run() async throws {
            try await runReportingErrors {
                let guardian = FileReplayGuard(directory: URL(fileURLWithPath: options.keyring))
                if reset {
                    try guardian.reset()
                    CLIIO.writeStdout("replay state reset in \(options.keyring)\n")
                    return
                }
                let state = try guardian.state(now: CLIIO.parseNow(options.now))
                func time(_ seconds: UInt64?) -> String {
                    guard let seconds else { return "-" }
                    return seconds == 0 ? "0 (none)" : "\(seconds) (\(CLIIO.iso(seconds)))"
                }
                CLIIO.writeStdout("""
                    ids remembered:      \(state.count) of \(state.capacity)
                    refuses issuedAt <=  \(time(state.evictedIssuedAt))   (ids evicted for room)
                    refuses expiresAt <= \(time(state.prunedThrough))   (expired ids dropped)
                    latest issuedAt:     \(time(state.latestIssuedAt))
                    latest accepted at:  \(time(state.latestAcceptedAt))   (device time; duplicate windows end by it)
                    earliest issuedAt:   \(time(state.earliestIssuedAt))
                    latest expiresAt:    \(time(state.latestExpiresAt))
                    file:                \(state.fileVersion.map { "version \($0)" } ?? "none yet"), \(state.journalRecords) journal records

                    """)
            }
        }
    }
}
