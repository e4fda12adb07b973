import Foundation
import Testing

/// `sealed-push device rotate` and `prune` on a key ring that does not exist (an outside audit: each failed but left
/// an empty 0700 directory behind, so the next mistyped command found "a key ring directory").
@Suite struct DeviceKeyRingCommandTests {
    @Test func rotateOrPruneOfAMissingRingLeaveNothing() throws {
        let cli = try CLITests()
        for command in ["rotate", "prune"] {
            let result = try cli.run(["device", command, "--keyring", "no-such-ring"])
            #expect(result.status != 0, "\(command)")
            #expect(result.stderr.contains("keysUnavailable"), "\(command): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("no-such-ring")), "\(command) left a directory")
        }
        // `device init` still creates the directory it needs.
        #expect(try cli.run(["device", "init", "--keyring", "no-such-ring"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: cli.path("no-such-ring/keyring.json")))
    }
}
