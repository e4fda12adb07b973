import ArgumentParser
import Dispatch
import Foundation
import Logging
import SealedPushAPNsEmulator
import SealedPushCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sealed-push emulator`: an APNs emulator on loopback (TLS + HTTP/2) that serves until stopped.
struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run an APNs provider-API emulator on loopback (TLS 1.2+, ALPN h2, HTTP/2) until interrupted.",
        discussion: """
            Generates a self-signed certificate at start and writes it to --cert-out for clients to trust. Verifies \
            ES256 provider tokens against --auth-key/--key-id/--team-id and applies Apple's rules and reasons. \
            Faults are injected with the --fault-* probabilities (per request) or --fault-script.
            """)

    @Option(name: .long, help: "Loopback address to bind.")
    var host = "127.0.0.1"

    @Option(name: .long, help: "Port (0 = any free port; the bound port is printed).")
    var port = 0

    @Option(name: .customLong("cert-out"), help: "Where to write the generated certificate (PEM).")
    var certOut: String

    @Option(name: .customLong("auth-key"), help: "The provider's .p8 key (or its PEM public key).")
    var authKey: String

    @Option(name: .customLong("key-id"), help: "The key id tokens must carry (kid).")
    var keyID: String

    @Option(name: .customLong("team-id"), help: "The team id tokens must carry (iss).")
    var teamID: String

    @Option(name: .customLong("record-dir"), help: "Write each accepted body to DIR/<token>/<apns-id>.json.")
    var recordDir: String?

    @Option(
        name: .customLong("record"),
        help: ArgumentHelp(
            "Write every accepted notification to FILE as one JSON line (the full history; memory stays bounded).",
            valueName: "FILE"))
    var recordFile: String?

    @Option(
        name: .customLong("keep-per-token"),
        help: "Accepted notifications held in memory per device token (APNs keeps the last one for an offline device).")
    var keepPerToken = 1

    @Option(name: .customLong("keep-total"), help: "Accepted notifications held in memory in all.")
    var keepTotal = 10_000

    @Option(
        name: .customLong("track-ids"),
        help: "Distinct apns-ids (the most recent) whose request and acceptance counts are kept, to spot duplicates.")
    var trackIDs = 100_000

    @Option(name: .customLong("unregistered"), help: "A device token (hex) to answer 410 Unregistered (repeatable).")
    var unregistered: [String] = []

    @Option(name: .customLong("topic"), help: "An allowed topic (repeatable; default: any).")
    var topics: [String] = []

    @Option(name: .customLong("max-streams"), help: "SETTINGS_MAX_CONCURRENT_STREAMS to announce.")
    var maxStreams = 1000

    @Option(name: .customLong("idle-timeout-ms"), help: "Close idle connections (GOAWAY IdleTimeout) after this long.")
    var idleTimeoutMilliseconds: Int?

    @Option(name: .customLong("fault-429"), help: "Probability of 429 TooManyRequests per request.")
    var fault429 = 0.0
    @Option(name: .customLong("fault-500"), help: "Probability of 500 InternalServerError per request.")
    var fault500 = 0.0
    @Option(name: .customLong("fault-503"), help: "Probability of 503 ServiceUnavailable per request.")
    var fault503 = 0.0
    @Option(name: .customLong("fault-reset"), help: "Probability of dropping the connection per request.")
    var faultReset = 0.0
    @Option(name: .customLong("fault-goaway"), help: "Probability of GOAWAY with streams in flight per request.")
    var faultGoAway = 0.0
    @Option(name: .customLong("fault-slow"), help: "Probability of a slow answer per request.")
    var faultSlow = 0.0
    @Option(name: .customLong("slow-ms"), help: "Delay of a slow answer, in milliseconds.")
    var slowMilliseconds = 500
    @Option(
        name: .customLong("fault-script"),
        help: "Faults for the first requests, comma-separated: ok, 429, 500, 503, reset, goaway, slow:MS, silent, stall.")
    var faultScript: String?
    @Option(name: .long, help: "Seed of the random fault draws.")
    var seed: UInt64 = 0x5EA1ED

    @Option(
        name: .customLong("token-update-scope"),
        help:
            "Where a new provider token within 20 minutes gets 429 TooManyProviderTokenUpdates: connection, key, none.")
    var tokenUpdateScope: TokenUpdateScope = .connection

    @Option(name: .long, help: "Event-loop threads.")
    var threads = 1

    @Flag(name: .long, help: "Log each request (no bodies).")
    var verbose = false

    func validate() throws {
        for probability in [fault429, fault500, fault503, faultReset, faultGoAway, faultSlow] {
            guard probability >= 0, probability <= 1 else { throw ValidationError("fault probabilities must be 0...1") }
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard (0...600_000).contains(slowMilliseconds) else { throw ValidationError("--slow-ms must be 0...600000") }
        guard (0...1_000).contains(keepPerToken) else { throw ValidationError("--keep-per-token must be 0...1000") }
        guard (0...10_000_000).contains(keepTotal) else { throw ValidationError("--keep-total must be 0...10000000") }
        guard (0...10_000_000).contains(trackIDs) else { throw ValidationError("--track-ids must be 0...10000000") }
        _ = try Self.parseScript(faultScript ?? "")
    }

    static func parseScript(_ text: String) throws -> [EmulatorFault?] {
        try FaultScript.parse(
            text,
            statuses: [
                "429": .tooManyRequests, "500": .internalServerError, "503": .serviceUnavailable, "goaway": .goAway,
            ])
    }

    func run() async throws {
        let keyText: String
        do { keyText = try String(contentsOfFile: authKey, encoding: .utf8) } catch {
            throw ValidationError("cannot read --auth-key \(authKey): \(error.localizedDescription)")
        }
        var configuration = APNsEmulatorConfiguration(
            authKeyPEM: keyText, keyID: keyID, teamID: teamID, host: host, port: port)
        configuration.certificateOutputPath = certOut
        configuration.recordDirectory = recordDir
        configuration.recordFile = recordFile
        configuration.recordedNotificationsPerToken = keepPerToken
        configuration.recordedNotificationsLimit = keepTotal
        configuration.trackedAPNsIDs = trackIDs
        configuration.maxConcurrentStreams = maxStreams
        configuration.threads = threads
        configuration.tokenUpdateScope = tokenUpdateScope
        configuration.allowedTopics = topics.isEmpty ? nil : Set(topics)
        configuration.unregisteredDeviceTokens = Dictionary(
            unregistered.map { ($0.lowercased(), Date()) }, uniquingKeysWith: { first, _ in first })
        configuration.idleTimeout = idleTimeoutMilliseconds.map { .milliseconds($0) }
        configuration.faults = EmulatorFaultPlan(
            script: try Self.parseScript(faultScript ?? ""),
            random: [
                .init(.tooManyRequests, probability: fault429), .init(.internalServerError, probability: fault500),
                .init(.serviceUnavailable, probability: fault503), .init(.connectionReset, probability: faultReset),
                .init(.goAway, probability: faultGoAway),
                .init(.slow(milliseconds: slowMilliseconds), probability: faultSlow),
            ].filter { $0.probability > 0 },
            seed: seed)

        var logger = Logger(label: "sealedpush.emulator", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = verbose ? .debug : .warning
        let emulator: APNsEmulator
        do {
            emulator = try APNsEmulator(configuration: configuration, logger: logger)
            try await emulator.start()
        } catch let error as SealedPushError {
            throw ValidationError(error.message)
        }
        print("APNs emulator listening on \(host):\(emulator.port) (certificate: \(certOut))")
        fflush(nil)

        await Self.waitForTerminationSignal()
        let recorder = emulator.recorder
        await emulator.stop()
        let faults = recorder.faultsInjected.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        print(
            "stopped: \(recorder.totalRequests) requests, \(recorder.totalAccepted) accepted "
                + "(\(recorder.duplicateAcceptances) duplicate), \(recorder.requestsWithoutPushType) without "
                + "apns-push-type, \(recorder.connectionsWithRequests) of \(recorder.connectionCount) connections "
                + "carried requests, faults \(faults.joined(separator: " "))")
    }

    /// Waits for SIGINT or SIGTERM.
    static func waitForTerminationSignal() async {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = ResumeOnce(continuation)
            let sources = [SIGINT, SIGTERM].map {
                DispatchSource.makeSignalSource(signal: $0, queue: DispatchQueue(label: "sealedpush.signals"))
            }
            for source in sources {
                source.setEventHandler { once.resume() }
                source.resume()
            }
            SignalSources.keep(sources)
        }
    }
}

/// Keeps signal sources alive for the life of the process.
enum SignalSources {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    static func keep(_ new: [any DispatchSourceSignal]) { sources += new }
}

/// Resumes a continuation at most once.
final class ResumeOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

    func resume() {
        let pending = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            defer { continuation = nil }
            return continuation
        }
        pending?.resume()
    }
}

extension TokenUpdateScope: ExpressibleByArgument {}
