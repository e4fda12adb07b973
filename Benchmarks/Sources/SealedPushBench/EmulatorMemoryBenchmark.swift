import Foundation
import Logging
import SealedPushAPNs
import SealedPushCore
import SealedPushServer

/// Resident memory of a `sealed-push emulator` process (the CLI, a separate process) under sustained load: VmRSS
/// after a 1,000-notification warm-up, after `count / 2` more and after `count` more, sent by `APNsClient` to 1,000
/// device tokens, as `/proc/PID/status` reports it. The emulator keeps counters and bounded windows (the last
/// notification per token, the last 100,000 apns-ids), so the second half of the load should add nothing.
enum EmulatorMemoryBenchmark {
    static func run(_ report: Report, fixture: Fixture, cliPath: String?, count: Int) async throws {
        guard let cliPath else {
            report.note("pass --cli .build/release/sealed-push to measure the emulator's memory under load")
            return
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sealed-push-emulator-rss-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyID = "BENCHKEY02", teamID = "BENCHTEAM2"
        let keyPath = directory.appendingPathComponent("AuthKey.p8").path
        let certificatePath = directory.appendingPathComponent("emulator-cert.pem").path
        try APNsKeyGenerator.writeNewKey(to: keyPath)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: cliPath)
        process.arguments = [
            "emulator", "--cert-out", certificatePath, "--auth-key", keyPath, "--key-id", keyID, "--team-id", teamID,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
        // "APNs emulator listening on 127.0.0.1:PORT (certificate: …)"
        var line = ""
        while !line.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = line.range(of: #"127\.0\.0\.1:(\d+)"#, options: .regularExpression),
            let port = Int(line[range].split(separator: ":").last ?? "")
        else {
            report.note("the emulator did not start: \(line)")
            return
        }

        var logger = Logger(label: "sealedpush.bench")
        logger.logLevel = .critical
        var configuration = APNsClientConfiguration(
            endpoint: APNsEndpoint(host: "127.0.0.1", port: port), trustRoots: .pemFile(certificatePath))
        configuration.maxConnections = 1
        let client = try APNsClient(
            configuration: configuration,
            tokenIssuer: ProviderTokenIssuer(key: APNsSigningKey(contentsOfFile: keyPath), keyID: keyID, teamID: teamID),
            logger: logger)
        let sealer = try Sealer(identity: fixture.identity, topic: Fixture.topic)
        let payload = try sealer.seal(Fixture.content, to: fixture.device).payload
        let tokens = try (0..<1_000).map { index in
            try DeviceToken(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index &* 7 &+ index >> 8) })
        }
        func notifications(_ total: Int) -> some Sequence<APNsNotification> {
            (0..<total).lazy.map {
                APNsNotification(
                    deviceToken: tokens[$0 % tokens.count], topic: Fixture.topic, payload: payload, priority: .immediate)
            }
        }
        let pid = process.processIdentifier
        let atStart = residentMegabytes(pid, "VmRSS")
        let warm = await client.send(notifications(1_000), maxConcurrent: 100)
        let afterWarmUp = residentMegabytes(pid, "VmRSS")
        let start = Clock.wallNanos()
        let firstHalf = await client.send(notifications(count / 2), maxConcurrent: 100)
        let afterHalf = residentMegabytes(pid, "VmRSS")
        let secondHalf = await client.send(notifications(count - count / 2), maxConcurrent: 100)
        let seconds = Double(Clock.wallNanos() - start) / 1e9
        let delivered = firstHalf.delivered + secondHalf.delivered
        let afterLoad = residentMegabytes(pid, "VmRSS")
        let peak = residentMegabytes(pid, "VmHWM")
        await client.shutdown()
        process.terminate()
        process.waitUntilExit()

        var row = Row(
            figure: "`sealed-push emulator` RSS after \(delivered)/\(count) notifications (1,000 tokens)",
            ours: afterLoad, comparison: "after the first \(count / 2)", theirs: afterHalf, ratio: .cost, target: nil)
        row.unit = "MB"
        report.add(row)
        row = Row(
            figure: "`sealed-push emulator` RSS after \(delivered)/\(count) notifications (1,000 tokens)",
            ours: afterLoad, comparison: "after a 1,000-notification warm-up (\(warm.delivered) delivered)",
            theirs: afterWarmUp, ratio: .cost, target: nil)
        row.unit = "MB"
        report.add(row)
        report.note(
            String(
                format: "emulator RSS: %.1f MB at start, %.1f MB warm, %.1f MB after %d, %.1f MB after %d (peak %.1f "
                    + "MB); %d notifications of %d bytes in %.1f s, 100 in flight",
                atStart ?? .nan, afterWarmUp ?? .nan, afterHalf ?? .nan, count / 2, afterLoad ?? .nan, count,
                peak ?? .nan, count, payload.count, seconds))
    }

    /// A `/proc/PID/status` field (`VmRSS`, `VmHWM`) in MB.
    static func residentMegabytes(_ pid: Int32, _ field: String) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if parts.count >= 2, let kilobytes = Double(parts[1]) { return kilobytes / 1024 }
        }
        return nil
    }
}
