import ArgumentParser
import Foundation
import Logging
import SealedPushCore
import SealedPushFCM
import SealedPushServer

/// `sealed-push fcm-send`: seal and deliver notifications over FCM HTTP v1, with a progress line and a summary.
struct FCMSendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm-send",
        abstract: "Seal and send notifications over FCM (or the FCM emulator) and print a summary; exits 1 if any failed.")

    @Option(name: .customLong("service-account"), help: "The service-account JSON file (mode 0600).")
    var serviceAccount: String
    @Option(name: .long, help: "The FCM project (default: the file's project_id).")
    var project: String?
    @Option(name: .long, help: "https://host[:port] of FCM (default https://fcm.googleapis.com; or the emulator).")
    var endpoint = "https://fcm.googleapis.com"
    @Option(name: .long, help: "A PEM certificate to trust instead of the system's, for FCM and the token endpoint (the emulator's --cert-out).")
    var ca: String?
    @Option(name: .customLong("token"), help: "An FCM registration token (repeatable).")
    var tokens: [String]
    @Option(name: .customLong("application-id"), help: "The Android application id the envelope is bound to.")
    var applicationID: String
    @Option(help: "The server identity's private key file (from `keygen`).")
    var serverKey: String
    @Option(help: "The device public key (SPK1:…). Each notification is sealed afresh.")
    var devicePublic: String
    @OptionGroup var seal: SealOptions
    @Option(name: .long, help: "Notifications per registration token.")
    var count = 1
    @Option(name: .long, help: "Notifications in flight at most.")
    var concurrency = 100
    @Option(name: .long, help: "android.priority: high or normal.")
    var priority = "high"
    @Option(name: .customLong("collapse-key"), help: "android.collapse_key (≤ 64 bytes; must not reveal content).")
    var collapseKey: String?
    @Option(name: .customLong("timeout-ms"), help: "Per-request answer timeout in milliseconds.")
    var timeoutMilliseconds = 10_000
    @Option(name: .customLong("max-attempts"), help: "Attempts per notification at most.")
    var maxAttempts = 5
    @OptionGroup var proxyOptions: ProxyOptions
    @Flag(name: .long, help: "Log failures to stderr.")
    var verbose = false
    @Flag(
        name: .customLong("seal-once"),
        help: "Seal one notification per token and send that same message every time: the client and HTTP/2 alone, for benchmarks (the receiver shows copies once).")
    var sealOnce = false

    func validate() throws {
        guard !tokens.isEmpty else { throw ValidationError("give at least one --token") }
        guard (1...10_000_000).contains(count), tokens.count * count <= 10_000_000 else {
            throw ValidationError("--count must be 1...10000000 (at most 10,000,000 notifications per run)")
        }
        guard (1...10_000).contains(concurrency) else { throw ValidationError("--concurrency must be 1...10000") }
        guard FCMPriority(rawValue: priority) != nil else { throw ValidationError("--priority must be high or normal") }
        guard (1...100).contains(maxAttempts) else { throw ValidationError("--max-attempts must be 1...100") }
        guard (1...600_000).contains(timeoutMilliseconds) else { throw ValidationError("--timeout-ms must be 1...600000") }
        guard seal.hasContent else { throw ValidationError("give the content: --title/--body/--content") }
    }

    func run() async throws {
        var logger = Logger(label: "sealedpush.fcm-send", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = verbose ? .debug : .error
        let client: FCMClient
        let sealer: Sealer
        let device: DevicePublicKey
        let content: NotificationContent
        let ttl = seal.ttl
        do {
            let proxy = try proxyOptions.providerProxy()
            sealer = try Sealer(identity: ServerIdentity(contentsOfFile: serverKey), topic: applicationID)
            device = try DevicePublicKey(text: devicePublic)
            content = try seal.notificationContent()
            _ = try sealer.prepare(content)  // malformedContent, contentTooLarge before connecting
            let padded = Padding.paddedLength(forContentLength: try content.canonicalJSON().count) ?? Padding.buckets.last!
            try FCMPayload.checkBudget(FCMPayload.dataSize(paddedPlaintextLength: padded))
            let account = try FCMServiceAccount(contentsOfFile: serviceAccount)
            let trusted = try ca.map { try String(decoding: CLIIO.read($0, limit: 1 << 20, what: "--ca"), as: UTF8.self) }
            let (fcm, _) = try FCMEndpoint.parse(endpoint, trustedCertificatePEM: trusted)
            var configuration = FCMClientConfiguration(serviceAccount: account, endpoint: fcm, projectID: project)
            configuration.requestTimeout = .milliseconds(timeoutMilliseconds)
            configuration.retry.maxAttempts = maxAttempts
            configuration.proxy = proxy
            client = try FCMClient(configuration: configuration, logger: logger)
        } catch let error as SealedPushError {
            CLIIO.writeStderr("error: \(error.code.name): \(error.message)\n")
            throw ExitCode(1)
        }
        let total = tokens.count * count
        let progress = FCMSendProgress(total: total, enabled: total > 1)
        let started = ContinuousClock.now
        let tokens = self.tokens
        let priority = FCMPriority(rawValue: self.priority) ?? .high
        let collapseKey = self.collapseKey
        var sealedOnce: [String: FCMMessage] = [:]
        if sealOnce {
            for token in tokens {
                let now = Sealer.currentTime()
                let sealed = try sealer.seal(content, to: device, ttl: ttl, now: now)
                sealedOnce[token] = FCMMessage(
                    token: token, envelope: sealed.envelope,
                    ttlSeconds: FCMMessage.ttl(expiresAt: sealed.expiresAt, now: now), priority: priority,
                    collapseKey: collapseKey)
            }
        }
        let presealed = sealedOnce
        await withTaskGroup(of: FCMSendResult.self) { group in
            var next = 0
            func add() {
                let token = tokens[next % tokens.count]
                next += 1
                group.addTask {
                    if let message = presealed[token] { return await client.send(message) }
                    do {
                        let now = Sealer.currentTime()
                        let sealed = try sealer.seal(content, to: device, ttl: ttl, now: now)
                        let message = FCMMessage(
                            token: token, envelope: sealed.envelope,
                            ttlSeconds: FCMMessage.ttl(expiresAt: sealed.expiresAt, now: now), priority: priority,
                            collapseKey: collapseKey)
                        return await client.send(message)
                    } catch {
                        return FCMSendResult(
                            outcome: .failure(FCMFailure(reason: .invalidArgument, status: nil, errorCode: nil, message: "\(error)")),
                            attempts: 0)
                    }
                }
            }
            while next < min(total, concurrency) { add() }
            for await result in group {
                progress.record(result)
                if next < total { add() }
            }
        }
        let elapsed = ContinuousClock.now - started
        progress.finish()
        await client.shutdown()
        let summary = progress.summary(elapsed: elapsed)
        print(summary.text)
        if let failure = client.configurationError { CLIIO.writeStderr("configuration error: \(failure)\n") }
        if summary.failed > 0 { throw ExitCode(1) }
    }
}

/// Counts results and redraws a progress line on stderr at most every 200 ms.
final class FCMSendProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let total: Int
    private let enabled: Bool
    private var delivered = 0
    private var failedByReason: [String: Int] = [:]
    private var retried = 0
    private var attempts = 0
    private var lastDraw = ContinuousClock.now

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func record(_ result: FCMSendResult) {
        lock.withLock {
            attempts += result.attempts
            if result.attempts > 1 { retried += 1 }
            if let failure = result.failure { failedByReason[failure.reason.name, default: 0] += 1 } else { delivered += 1 }
            guard enabled, ContinuousClock.now - lastDraw > .milliseconds(200) else { return }
            lastDraw = ContinuousClock.now
            draw()
        }
    }

    private func draw() {
        let done = delivered + failedByReason.values.reduce(0, +)
        CLIIO.writeStderr("\r\(done)/\(total) sent, \(delivered) delivered, \(done - delivered) failed   ")
    }

    func finish() {
        lock.withLock {
            guard enabled else { return }
            draw()
            CLIIO.writeStderr("\n")
        }
    }

    func summary(elapsed: Duration) -> (text: String, failed: Int) {
        lock.withLock {
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let failed = failedByReason.values.reduce(0, +)
            let reasons = failedByReason.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let text = [
                "delivered: \(delivered)/\(total)", "failed: \(failed)" + (reasons.isEmpty ? "" : " (\(reasons))"),
                "retried: \(retried) notifications (\(attempts) requests)",
                String(format: "time: %.3f s, %.0f notifications/s", seconds, seconds > 0 ? Double(total) / seconds : 0),
            ].joined(separator: "\n")
            return (text, failed)
        }
    }
}
