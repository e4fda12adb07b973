import ArgumentParser
import Foundation
import Logging
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushFCMEmulator
import SealedPushServer

/// `sealed-push fcm-emulator`: an FCM HTTP v1 emulator on loopback (TLS, HTTP/2 and HTTP/1.1, an OAuth token
/// endpoint) that serves until stopped.
struct FCMEmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm-emulator",
        abstract: "Run an FCM HTTP v1 emulator on loopback (TLS, ALPN h2 and http/1.1, OAuth token endpoint) until interrupted.",
        discussion: """
            Generates a self-signed certificate (--cert-out) and a service account: a fresh RSA key written with \
            --service-account-out (0600) as a Google service-account file whose token_uri is this emulator; an \
            existing file there is kept (the emulator does not start) unless --force is given. \
            Assertions (RS256 JWT, RFC 7523) are verified against that key; sends need the access tokens it issues. \
            Faults are injected with the --fault-* probabilities (per send) or --fault-script.
            """)

    @Option(name: .long, help: "Loopback address to bind.")
    var host = "127.0.0.1"
    @Option(name: .long, help: "Port (0 = any free port; the bound port is printed).")
    var port = 0
    @Option(name: .customLong("cert-out"), help: "Where to write the generated certificate (PEM).")
    var certOut: String
    @Option(
        name: .customLong("service-account-out"),
        help: ArgumentHelp(
            "Where to write the generated service-account JSON (0600, atomic); an existing file is kept unless "
                + "--force."))
    var serviceAccountOut: String
    @Flag(name: .long, help: "Replace an existing --service-account-out file.")
    var force = false
    @Option(name: .long, help: "The FCM project id.")
    var project = "sealedpush-emulator"
    @Option(name: .customLong("unregistered"), help: "A registration token to answer 404 UNREGISTERED (repeatable).")
    var unregistered: [String] = []
    @Option(name: .customLong("token-lifetime"), help: "expires_in of issued access tokens, seconds.")
    var tokenLifetime = 3600
    @Option(name: .customLong("retry-after"), help: "Retry-After seconds sent with 429 and 503.")
    var retryAfter = 1
    @Option(name: .customLong("keep-total"), help: "Accepted messages held in memory.")
    var keepTotal = 10_000
    @Option(name: .customLong("record-dir"), help: "Write each accepted message's data map to DIR/<token prefix>/<n>.json (what the app's onMessageReceived gets).")
    var recordDir: String?
    @Option(name: .customLong("fault-429"), help: "Probability of 429 QUOTA_EXCEEDED per send.")
    var fault429 = 0.0
    @Option(name: .customLong("fault-500"), help: "Probability of 500 INTERNAL per send.")
    var fault500 = 0.0
    @Option(name: .customLong("fault-503"), help: "Probability of 503 UNAVAILABLE per send.")
    var fault503 = 0.0
    @Option(name: .customLong("fault-unregistered"), help: "Probability that a send's token becomes UNREGISTERED.")
    var faultUnregistered = 0.0
    @Option(name: .customLong("fault-reset"), help: "Probability of dropping the connection per send.")
    var faultReset = 0.0
    @Option(name: .customLong("fault-slow"), help: "Probability of a slow answer per send.")
    var faultSlow = 0.0
    @Option(name: .customLong("slow-ms"), help: "Delay of a slow answer, in milliseconds.")
    var slowMilliseconds = 500
    @Option(
        name: .customLong("fault-script"),
        help: "Faults for the first sends, comma-separated: ok, 429, 500, 503, 404, reset, slow:MS, silent, stall.")
    var faultScript: String?
    @Option(name: .long, help: "Seed of the random fault draws.")
    var seed: UInt64 = 0x5EA1ED
    @Option(name: .long, help: "Event-loop threads.")
    var threads = 1
    @Flag(name: .long, help: "Log refused assertions (no tokens or bodies).")
    var verbose = false

    func validate() throws {
        for probability in [fault429, fault500, fault503, faultUnregistered, faultReset, faultSlow] {
            guard probability >= 0, probability <= 1 else { throw ValidationError("fault probabilities must be 0...1") }
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard (1...86_400).contains(tokenLifetime) else { throw ValidationError("--token-lifetime must be 1...86400") }
        guard (0...3600).contains(retryAfter) else { throw ValidationError("--retry-after must be 0...3600") }
        guard (0...600_000).contains(slowMilliseconds) else { throw ValidationError("--slow-ms must be 0...600000") }
        guard (0...10_000_000).contains(keepTotal) else { throw ValidationError("--keep-total must be 0...10000000") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads must be 1...64") }
        _ = try Self.parseScript(faultScript ?? "")
    }

    static func parseScript(_ text: String) throws -> [EmulatorFault?] {
        try FaultScript.parse(
            text,
            statuses: [
                "429": .status(429, reason: "QUOTA_EXCEEDED"), "500": .status(500, reason: "INTERNAL"),
                "503": .status(503, reason: "UNAVAILABLE"), "404": .status(404, reason: "UNREGISTERED"),
            ])
    }

    func run() async throws {
        var logger = Logger(label: "sealedpush.fcm-emulator", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = verbose ? .debug : .warning
        let emulator: FCMEmulator
        do {
            // Never silently replace a file that may be a real service account: refuse before starting (the write
            // itself links the new file into place, so a file appearing meanwhile is not clobbered either).
            if !force { try CLIIO.refuseExistingOutput(serviceAccountOut, option: "--service-account-out") }
            emulator = try await FCMEmulator.startTrustingNewAccount(
                writingAccountTo: serviceAccountOut, projectID: project, overwrite: force, logger: logger
            ) { configuration in
                configuration.host = host
                configuration.port = port
                configuration.certificateOutputPath = certOut
                configuration.unregisteredTokens = Set(unregistered)
                configuration.accessTokenLifetime = tokenLifetime
                configuration.retryAfterSeconds = retryAfter
                configuration.recordedMessagesLimit = keepTotal
                configuration.recordDirectory = recordDir
                configuration.unregisterProbability = faultUnregistered
                configuration.threads = threads
                configuration.faults = EmulatorFaultPlan(
                    script: try Self.parseScript(faultScript ?? ""),
                    random: [
                        .init(.status(429, reason: "QUOTA_EXCEEDED"), probability: fault429),
                        .init(.status(500, reason: "INTERNAL"), probability: fault500),
                        .init(.status(503, reason: "UNAVAILABLE"), probability: fault503),
                        .init(.connectionReset, probability: faultReset),
                        .init(.slow(milliseconds: slowMilliseconds), probability: faultSlow),
                    ].filter { $0.probability > 0 },
                    seed: seed)
            }
        } catch let error as SealedPushError {
            // Not a usage error: `error: <code>: <message>`, exit status 1, as `keygen` reports it.
            CLIIO.writeStderr("error: \(error.code.name): \(error.message)\n")
            throw ExitCode(1)
        }
        print("FCM emulator listening on \(host):\(emulator.port) (certificate: \(certOut), service account: "
            + "\(serviceAccountOut), send URL: \(emulator.baseURL)/v1/projects/\(project)/messages:send)")
        fflush(nil)
        await EmulatorCommand.waitForTerminationSignal()
        let recorder = emulator.recorder
        await emulator.stop()
        let faults = recorder.faultsInjected.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        print(
            "stopped: \(recorder.totalRequests) sends, \(recorder.totalAccepted) accepted "
                + "(\(recorder.duplicateAcceptances) duplicate), \(recorder.accessTokensIssued) access tokens issued, "
                + "faults \(faults.joined(separator: " "))")
    }
}
