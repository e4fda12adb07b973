import Foundation
import Logging
import SealedPushAPNs
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushServer

/// Delivery throughput: sealed notifications sent by `APNsClient` over TLS 1.2+ / HTTP/2 with an ES256 provider token
/// to the APNs emulator on loopback, on one connection and with four allowed. Client and emulator share this process
/// and the machine's cores, so the figures are a floor for the client alone. Rows are labelled by the connections that
/// actually carried requests (the client's count, checked against the emulator's).
enum DeliveryBenchmark {
    static func run(_ report: Report, fixture: Fixture, count: Int) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sealed-push-delivery-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyID = "BENCHKEY01", teamID = "BENCHTEAM1"
        let keyPath = directory.appendingPathComponent("AuthKey.p8").path
        let certificatePath = directory.appendingPathComponent("emulator-cert.pem").path
        try APNsKeyGenerator.writeNewKey(to: keyPath)
        var logger = Logger(label: "sealedpush.bench")
        logger.logLevel = .critical
        var emulatorConfiguration = APNsEmulatorConfiguration(
            authKeyPEM: try String(contentsOfFile: keyPath, encoding: .utf8), keyID: keyID, teamID: teamID)
        emulatorConfiguration.certificateOutputPath = certificatePath
        emulatorConfiguration.threads = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
        let emulator = try APNsEmulator(configuration: emulatorConfiguration, logger: logger)
        try await emulator.start()

        let sealer = try Sealer(identity: fixture.identity, topic: Fixture.topic)
        let payload = try sealer.seal(Fixture.content, to: fixture.device).payload
        let tokens = try (0..<count).map { index in
            try DeviceToken(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index &* 7 &+ index >> 8) })
        }

        func throughput(connections: Int) async throws -> (perSecond: Double, delivered: Int, used: Int, seen: Int) {
            var configuration = APNsClientConfiguration(
                endpoint: APNsEndpoint(host: "127.0.0.1", port: emulator.port), trustRoots: .pemFile(certificatePath))
            configuration.maxConnections = connections
            let seenBefore = emulator.recorder.connectionsWithRequests
            let client = try APNsClient(
                configuration: configuration,
                tokenIssuer: ProviderTokenIssuer(key: APNsSigningKey(contentsOfFile: keyPath), keyID: keyID, teamID: teamID),
                logger: logger)
            // Warm up: connect, handshake, first token.
            _ = await client.send(tokens.prefix(200).map {
                APNsNotification(deviceToken: $0, topic: Fixture.topic, payload: payload, priority: .immediate)
            }, maxConcurrent: 100)
            let notifications = tokens.map {
                APNsNotification(deviceToken: $0, topic: Fixture.topic, payload: payload, priority: .immediate)
            }
            let start = Clock.wallNanos()
            let summary = await client.send(notifications, maxConcurrent: 200 * connections)
            let seconds = Double(Clock.wallNanos() - start) / 1e9
            await client.shutdown()
            return (
                Double(summary.delivered) / seconds, summary.delivered, client.statistics.connectionsUsed,
                emulator.recorder.connectionsWithRequests - seenBefore
            )
        }

        let one = try await throughput(connections: 1)
        let several = try await throughput(connections: 4)
        await emulator.stop()
        func label(_ run: (perSecond: Double, delivered: Int, used: Int, seen: Int), allowed: Int) -> String {
            let carried = run.used == 1 ? "1 connection" : "\(run.used) connections"
            return "delivery to the emulator, \(carried) carried requests (\(allowed) allowed, "
                + "\(run.delivered)/\(count) delivered)"
        }
        if one.used != one.seen || several.used != several.seen {
            report.note("connections carrying requests: client says \(one.used) and \(several.used), "
                + "emulator \(one.seen) and \(several.seen)")
        }
        var row = Row(figure: label(one, allowed: 1),
                      ours: one.perSecond, comparison: "—", theirs: nil, ratio: .speedup, target: nil)
        row.unit = "ops/s"
        report.add(row)
        row = Row(figure: label(several, allowed: 4),
                  ours: several.perSecond, comparison: one.used == 1 ? "1 connection" : "\(one.used) connections",
                  theirs: one.perSecond, ratio: .throughput, target: nil)
        row.unit = "ops/s"
        report.add(row)
        report.note("delivery: TLS + HTTP/2 on loopback, client and emulator in one process on the same cores; "
            + "\(count) notifications of \(payload.count) bytes, 200 in flight per allowed connection")
    }
}
