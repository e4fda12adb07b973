import ArgumentParser
import Foundation
import Logging
import SealedPushAPNs
import SealedPushCore
import SealedPushServer

/// `sealed-push send`: deliver notifications over HTTP/2 with token auth, with a progress line and a summary.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send notifications to APNs (or the emulator) and print a summary; exits 1 if any failed.")

    @Option(name: .long, help: "https://host[:port] (e.g. https://api.push.apple.com or the emulator).")
    var endpoint: String

    @Option(
        name: .long, help: "A PEM file of certificates to trust instead of the system's (the emulator's --cert-out).")
    var ca: String?

    @Option(name: .customLong("auth-key"), help: "The .p8 token-signing key.")
    var authKey: String

    @Option(name: .customLong("key-id"), help: "The key's 10-character key id.")
    var keyID: String

    @Option(name: .customLong("team-id"), help: "The 10-character team id.")
    var teamID: String

    @Option(name: .long, help: "apns-topic: the app's bundle id.")
    var topic: String

    @Option(name: .customLong("token"), help: "A device token, hex (repeatable).")
    var tokens: [String]

    @OptionGroup var payloadOptions: SendPayloadOptions

    @Option(name: .long, help: "Notifications per device token.")
    var count = 1

    @Option(name: .long, help: "Notifications in flight at most.")
    var concurrency = 100

    @Option(
        name: .long,
        help: "HTTP/2 connections to spread the requests over (opened as load arrives; the summary says how many carried requests).")
    var connections = 1

    @Option(
        name: .customLong("streams-per-connection"),
        help: "Concurrent streams per connection at most (the server's limit also applies).")
    var streamsPerConnection = 1000

    @Option(name: .long, help: "apns-priority: 10 or 5.")
    var priority = 10

    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id (≤ 64 bytes; must not reveal content).")
    var collapseID: String?

    @Option(name: .customLong("expiration"), help: "apns-expiration, UNIX seconds (0 = try once).")
    var expiration: Int64?

    @Option(name: .customLong("timeout-ms"), help: "Per-request answer timeout in milliseconds.")
    var timeoutMilliseconds = 10_000

    @Option(
        name: .customLong("max-attempts"),
        help: "Requests per notification that APNs may have processed, at most (resends after GOAWAY are free).")
    var maxAttempts = 5

    @OptionGroup var proxyOptions: ProxyOptions

    @Flag(name: .long, help: "Log connection events and failures to stderr.")
    var verbose = false

    func validate() throws {
        guard !tokens.isEmpty else { throw ValidationError("give at least one --token") }
        guard (1...10_000_000).contains(count) else { throw ValidationError("--count must be 1...10000000") }
        guard tokens.count * count <= 10_000_000 else {
            throw ValidationError("at most 10,000,000 notifications per run")
        }
        guard (1...10_000).contains(concurrency) else { throw ValidationError("--concurrency must be 1...10000") }
        guard (1...64).contains(connections) else { throw ValidationError("--connections must be 1...64") }
        guard (1...10_000).contains(streamsPerConnection) else {
            throw ValidationError("--streams-per-connection must be 1...10000")
        }
        guard priority == 10 || priority == 5 else { throw ValidationError("--priority must be 10 or 5") }
        guard (1...100).contains(maxAttempts) else { throw ValidationError("--max-attempts must be 1...100") }
        guard (1...600_000).contains(timeoutMilliseconds) else {
            throw ValidationError("--timeout-ms must be 1...600000")
        }
    }

    /// A bad token, payload, key or endpoint is reported as `error: <code>: <message>` with exit status 1 (as `keygen`
    /// and `seal` report theirs), not as a usage error; nothing is sent.
    func run() async throws {
        var logger = Logger(label: "sealedpush.send", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = verbose ? .debug : .error
        let deviceTokens: [DeviceToken]
        let builder: @Sendable (DeviceToken) throws -> [UInt8]
        let client: APNsClient
        do {
            deviceTokens = try tokens.map { token in
                do { return try DeviceToken(hex: token) } catch let error as SealedPushError {
                    throw SealedPushError(error.code, "--token: \(error.message)")
                }
            }
            builder = try payloadOptions.makePayloadBuilder(topic: topic)
            let proxy = try proxyOptions.providerProxy()
            let key = try Self.loadAuthKey(authKey)
            let issuer = try ProviderTokenIssuer(key: key, keyID: keyID, teamID: teamID)
            let apns: APNsEndpoint
            do { apns = try APNsEndpoint(url: endpoint) } catch let error as SealedPushError {
                throw SealedPushError(error.code, "--endpoint: \(error.message)")
            }
            var configuration = APNsClientConfiguration(endpoint: apns, trustRoots: ca.map { .pemFile($0) } ?? .system)
            configuration.maxConnections = connections
            configuration.maxConcurrentStreamsPerConnection = streamsPerConnection
            configuration.requestTimeout = .milliseconds(timeoutMilliseconds)
            configuration.retry.maxAttempts = maxAttempts
            configuration.proxy = proxy
            client = try APNsClient(configuration: configuration, tokenIssuer: issuer, logger: logger)
        } catch let error as SealedPushError {
            CLIIO.writeStderr("error: \(error.code.name): \(error.message)\n")
            throw ExitCode(1)
        }

        let total = deviceTokens.count * count
        let template = APNsNotificationTemplate(
            topic: topic, priority: priority == 5 ? .powerConsiderate : .immediate,
            expiration: expiration.map { Date(timeIntervalSince1970: TimeInterval($0)) }, collapseID: collapseID)
        let progress = SendProgress(total: total, enabled: total > 1)
        let started = ContinuousClock.now
        let summary = await client.sendBulk(
            to: (0..<total).lazy.map { deviceTokens[$0 % deviceTokens.count] }, template: template,
            maxConcurrent: concurrency, payload: builder, onReport: { progress.record($0) })
        let elapsed = ContinuousClock.now - started
        progress.finish()
        await client.shutdown()

        print(Self.describe(summary, elapsed: elapsed, statistics: client.statistics))
        if summary.failed > 0 || summary.delivered != total { throw ExitCode(1) }
    }

    /// Loads the `--auth-key` `.p8` file through the CLI's file reader (non-blocking, a regular file only, at most
    /// `APNsSigningKey.maximumFileLength` bytes).
    ///
    /// - Parameter path: The `.p8` file.
    /// - Returns: The signing key.
    /// - Throws: `SealedPushError` `io` or `invalidArgument` (the file cannot be read, is not a regular file, is too
    ///   large) or `invalidKey` (not an unencrypted PKCS#8 P-256 key); the message names `--auth-key` and the file,
    ///   never its contents.
    static func loadAuthKey(_ path: String) throws -> APNsSigningKey {
        var bytes = try CLIIO.readFile(path, limit: APNsSigningKey.maximumFileLength, what: "--auth-key")
        defer { Sodium.wipe(&bytes) }
        do {
            return try APNsSigningKey(pemBytes: bytes)
        } catch let error as SealedPushError {
            throw SealedPushError(error.code, "--auth-key \(path): \(error.message)")
        }
    }

    static func describe(_ summary: APNsBulkSummary, elapsed: Duration, statistics: APNsClientCounters) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var lines = ["delivered: \(summary.delivered)/\(summary.total)"]
        let failures = summary.failedByReason.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: " ")
        lines.append("failed: \(summary.failed)" + (failures.isEmpty ? "" : " (\(failures))"))
        lines.append("retried: \(summary.retried) notifications (\(summary.attempts) requests)")
        lines.append("possible duplicates: \(summary.possibleDuplicates)")
        lines.append(
            "connections: \(statistics.connectionsOpened) opened, \(statistics.connectionsUsed) carried requests, "
                + "GOAWAY: \(statistics.goAwaysReceived), "
                + String(
                    format: "time: %.3f s, %.0f notifications/s", seconds,
                    seconds > 0 ? Double(summary.total) / seconds : 0))
        return lines.joined(separator: "\n")
    }
}

/// The progress line on stderr, redrawn at most every 200 ms.
final class SendProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let total: Int
    private let enabled: Bool
    private var summary = APNsBulkSummary()
    private var lastDraw = ContinuousClock.now

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func record(_ report: APNsSendReport) {
        lock.withLock {
            summary.add(report)
            guard enabled, ContinuousClock.now - lastDraw > .milliseconds(200) else { return }
            lastDraw = ContinuousClock.now
            draw()
        }
    }

    func finish() {
        lock.withLock {
            guard enabled else { return }
            draw()
            FileHandle.standardError.write(Data("\n".utf8))
        }
    }

    private func draw() {
        let line =
            "\rsent \(summary.total)/\(total)  delivered \(summary.delivered)  failed \(summary.failed)  "
            + "retried \(summary.retried)"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
