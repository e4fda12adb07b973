import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer
import Testing

/// Issue 19 §3: `kill -9` at random points of 1,000 opens never loses an accepted id nor corrupts the replay state.
/// Each open is a real `sealed-push open --keyring` process (the extension's path: key ring, envelope, replay
/// journal), two at a time on one directory (app and extension); about half are killed with SIGKILL after a random
/// delay within a process's run time. The journal compacts every 16 records, so kills land in appends, in
/// compactions and between them.
@Suite struct ReplayCrashCLITests {
    @Test func killNineDuringOpensLosesNoAcceptedIDAndNeverCorruptsTheState() throws {
        let cli = try CLITests()
        let now: UInt64 = 1_800_000_000
        let registration = try cli.run(["device", "init", "--keyring", "ring", "--now", String(now - 60)])
        #expect(registration.status == 0, "\(registration.stderr)")
        let devicePublic = try #require(
            try JSONSerialization.jsonObject(with: Data(registration.stdout.utf8)) as? [String: Any])["publicKey"] as? String
        let identity = try ServerIdentity.generate()
        let sealer = try Sealer(identity: identity, topic: "crash.example")
        let device = try DevicePublicKey(rawRepresentation: KeyText.decodePublicKey(try #require(devicePublic)))
        let count = 1_000
        var sealed: [SealedNotification] = []
        for index in 0..<count {
            let notification = try sealer.seal(NotificationContent(body: "message \(index)"), to: device, ttl: 86_400,
                                               now: now + UInt64(index))
            try Data(notification.payload).write(to: URL(fileURLWithPath: cli.path("p\(index).json")))
            sealed.append(notification)
        }
        let serverPublic = KeyText.encodePublicKey(identity.publicKey)
        let outcomes = Outcomes(count: count)
        // Two workers (app and extension), interleaved indices.
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            var generator = SystemRandomNumberGenerator()
            for index in stride(from: worker, to: count, by: 2) {
                let process = Process()
                process.executableURL = CLITests.binary
                process.arguments = ["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "crash.example",
                                     "--payload", "p\(index).json", "--now", String(now + UInt64(index) + 1),
                                     "--replay-journal-limit", "16"]
                process.currentDirectoryURL = cli.directory
                let out = Pipe(), err = Pipe()
                process.standardOutput = out
                process.standardError = err
                do { try process.run() } catch { outcomes.set(index, .failed("launch: \(error)")); continue }
                let kill = Bool.random(using: &generator)
                if kill {
                    usleep(UInt32.random(in: 0..<25_000, using: &generator))
                    Foundation.kill(process.processIdentifier, SIGKILL)
                }
                let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                if process.terminationReason == .uncaughtSignal {
                    outcomes.set(index, .killed)
                } else if process.terminationStatus == 0, stdout.contains("message \(index)") {
                    outcomes.set(index, .accepted)
                } else {
                    outcomes.set(index, .failed(stderr))
                }
            }
        }
        let results = outcomes.all
        let failures = results.enumerated().compactMap { index, outcome -> String? in
            if case .failed(let text) = outcome { return "\(index): \(text)" } else { return nil }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")  // no keyStoreCorrupt, no io, never anything else
        let accepted = results.indices.filter { results[$0] == .accepted }
        let killed = results.indices.filter { results[$0] == .killed }
        // A kill after the process ended does nothing, so fewer than half are killed; enough must be.
        #expect(accepted.count > count / 3 && killed.count > count / 8, "accepted \(accepted.count), killed \(killed.count)")
        // Every id whose open returned is refused from now on: by a new process (the CLI) for one of them, and
        // in this process for every one, long after any duplicate window.
        let guardian = FileReplayGuard(directory: URL(fileURLWithPath: cli.path("ring")), duplicateWindow: 0)
        var recordedOfKilled = 0
        for index in accepted {
            let envelope = sealed[index]
            #expect(errorCode { try guardian.checkAndRecord(
                messageID: envelope.messageID, issuedAt: envelope.issuedAt, expiresAt: envelope.expiresAt,
                now: now + UInt64(count) + 10) } == .replayed, "accepted message \(index) opened again")
        }
        let state = try guardian.state(now: now + UInt64(count) + 10)
        #expect(state.fileVersion == 4)
        for index in killed {
            let envelope = sealed[index]
            if errorCode({ try guardian.checkAndRecord(
                messageID: envelope.messageID, issuedAt: envelope.issuedAt, expiresAt: envelope.expiresAt,
                now: now + UInt64(count) + 10) }) == .replayed { recordedOfKilled += 1 }
        }
        // The state holds exactly the accepted ids and those of killed opens that got as far as their record.
        #expect(state.count == accepted.count + recordedOfKilled)
        let first = try #require(accepted.first)
        let reopened = try cli.run(["open", "--keyring", "ring", "--server-public", serverPublic, "--topic", "crash.example",
                                    "--payload", "p\(first).json", "--now", String(now + UInt64(count) + 10)])
        #expect(reopened.status != 0 && reopened.stderr.contains("replayed"), "\(reopened.stderr)")
        print("replay crash test: \(accepted.count) accepted, \(killed.count) killed (\(recordedOfKilled) of them had "
              + "recorded their id), state holds \(state.count) ids, \(state.journalRecords) journal records")
    }
}

/// What happened to each open, filled in by two workers.
private final class Outcomes: @unchecked Sendable {
    enum Outcome: Equatable {
        case pending, accepted, killed
        case failed(String)
    }

    private let lock = NSLock()
    private var values: [Outcome]

    init(count: Int) { values = Array(repeating: .pending, count: count) }

    func set(_ index: Int, _ outcome: Outcome) { lock.withLock { values[index] = outcome } }

    var all: [Outcome] { lock.withLock { values } }
}

private func errorCode(_ body: () throws -> Void) -> SealedPushError.Code? {
    do {
        try body()
        return nil
    } catch let error as SealedPushError {
        return error.code
    } catch {
        return nil
    }
}
