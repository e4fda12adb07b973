import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer

/// Peak resident memory of a one-shot open process with a 3-key key ring: the `sealed-push open --keyring` CLI
/// (when `--cli PATH` is given) and a library-only probe, each measured by `/usr/bin/time -f %M` on a fresh process.
enum MemoryBenchmark {
    static func run(_ report: Report, fixture: Fixture, cliPath: String?) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sealed-push-bench-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyring = directory.appendingPathComponent("keyring", isDirectory: true)
        let now = Sealer.currentTime()
        let manager = DeviceKeyManager(directory: keyring)
        try manager.create(now: now - 7_200)
        try manager.rotate(now: now - 3_600)
        let registration = try manager.rotate(now: now - 60)
        let device = try DevicePublicKey(text: registration.publicKey)
        let sealer = try Sealer(identity: fixture.identity, topic: Fixture.topic)
        let payloads = try (0..<4).map { index -> String in
            let path = directory.appendingPathComponent("payload-\(index).json").path
            try Data(sealer.seal(Fixture.content, to: device, now: now).payload).write(to: URL(fileURLWithPath: path))
            return path
        }
        let server = fixture.identity.publicKeyText
        let probe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("sealed-push-open-probe").path

        let noop = peakKilobytes([probe, "--noop"])
        let library = peakKilobytes([probe, keyring.path, server, Fixture.topic, payloads[0]])
        var row = Row(figure: "one-shot open, library probe (3-key ring)", ours: library.map { Double($0) / 1024 },
                      comparison: "target 16 MB", theirs: 16, ratio: .cost, target: 1.0)
        row.unit = "MB"
        report.add(row)
        // Each run opens a fresh envelope (the receiver's replay guard refuses one seen before).
        try blobRows(report, directory: directory, library: library,
                     open: payloads[2...].map { [probe, keyring.path, server, Fixture.topic, $0] })
        if let noop { report.note(String(format: "the same probe exiting at once peaks at %.1f MB (Swift runtime + "
            + "Foundation + libraries loaded)", Double(noop) / 1024)) }
        if let cliPath {
            let cli = peakKilobytes([cliPath, "open", "--keyring", keyring.path, "--server-public", server,
                                     "--topic", Fixture.topic, "--payload", payloads[1]])
            // The developer CLI links the whole toolkit (NIO, the emulator, ArgumentParser, full Foundation); it is
            // not what runs in an extension, so it is shown beside the library's figure rather than the target.
            row = Row(figure: "one-shot `sealed-push open --keyring` (3 keys, all-in-one developer CLI)",
                      ours: cli.map { Double($0) / 1024 }, comparison: "library probe",
                      theirs: library.map { Double($0) / 1024 }, ratio: .cost, target: nil)
            row.unit = "MB"
            report.add(row)
        } else {
            report.note("pass --cli .build/release/sealed-push to measure the CLI's one-shot open")
        }
    }

    /// The probe's open followed by decrypting a 10 MB image and a 50 MB video blob into a file (64 KiB reads).
    static func blobRows(_ report: Report, directory: URL, library: Int?, open: [[String]]) throws {
        var peaks: [Int: Int] = [:]
        for (size, open) in zip([10_000_000, 50_000_000], open) {
            let plainPath = directory.appendingPathComponent("plain-\(size)").path
            let blobPath = directory.appendingPathComponent("blob-\(size)").path
            _ = FileManager.default.createFile(atPath: plainPath, contents: nil)  // the handle below throws if it is not there
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: plainPath))
            var generator = SystemRandomNumberGenerator()
            var left = size
            while left > 0 {
                let take = min(left, 1 << 20)
                handle.write(Data((0..<take).map { _ in UInt8.random(in: 0...255, using: &generator) }))
                left -= take
            }
            try handle.close()
            let source = try BlobSourceFile(path: plainPath)
            _ = FileManager.default.createFile(atPath: blobPath, contents: nil)
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: blobPath))
            let result = try BlobEncryptor().encrypt(reading: source.read(into:), writing: { output.write(Data($0)) })
            try output.close()
            try FileManager.default.removeItem(atPath: plainPath)
            let out = directory.appendingPathComponent("out-\(size)", isDirectory: true)
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            peaks[size] = peakKilobytes(open + [Hex.encode(result.keyBytes), String(size), blobPath, out.path])
            try FileManager.default.removeItem(atPath: blobPath)
            try? FileManager.default.removeItem(at: out)
        }
        var row = Row(figure: "one-shot open + decrypt a 10 MB image blob into a file, library probe",
                      ours: peaks[10_000_000].map { Double($0) / 1024 }, comparison: "target 16 MB", theirs: 16,
                      ratio: .cost, target: 1.0)
        row.unit = "MB"
        report.add(row)
        row = Row(figure: "one-shot open + decrypt a 50 MB video blob into a file, library probe",
                  ours: peaks[50_000_000].map { Double($0) / 1024 }, comparison: "open only",
                  theirs: library.map { Double($0) / 1024 }, ratio: .cost, target: nil)
        row.unit = "MB"
        report.add(row)
        if let big = peaks[50_000_000], let small = peaks[10_000_000], let library {
            report.note(String(format: "decrypting raises the open's peak by %.0f KiB (10 MB image) and %.0f KiB "
                + "(50 MB video): a few 64 KiB chunks, independent of the file size", Double(small - library),
                Double(big - library)))
        }
    }

    /// Runs a command under `/usr/bin/time -f %M` and returns its peak RSS in KiB, or nil if it failed.
    static func peakKilobytes(_ command: [String]) -> Int? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "PEAK_RSS_KB=%M"] + command
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            print("  command failed (\(process.terminationStatus)): \(command.joined(separator: " "))\n\(output)")
            return nil
        }
        return output.split(separator: "\n").last { $0.hasPrefix("PEAK_RSS_KB=") }
            .flatMap { Int($0.dropFirst("PEAK_RSS_KB=".count)) }
    }
}
