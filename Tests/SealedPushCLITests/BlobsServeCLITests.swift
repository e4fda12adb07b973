import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `sealed-push blobs serve` as a real process on loopback.
@Suite struct BlobsServeCLITests {
    /// Starts `blobs serve` and returns the process, its stdout reader and the port from its first line.
    func serve(_ arguments: [String]) throws -> (Process, FileHandle, Int) {
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = ["blobs", "serve", "--port", "0"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while let byte = try out.fileHandleForReading.read(upToCount: 1)?.first, byte != 0x0A { line.append(byte) }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: #"127\.0\.0\.1:(\d+)/"#, options: .regularExpression) else {
            process.terminate()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "no port in \(text)"])
        }
        let port = Int(text[range].dropFirst("127.0.0.1:".count).dropLast())!
        return (process, out.fileHandleForReading, port)
    }

    @Test func servesABlobFileWithItsHeadersAndStopsOnSIGTERM() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blobs-serve-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (process, output, port) = try serve(["--dir", directory.path])
        let name = String(repeating: "ab", count: 24)
        let bytes = Data((0..<1_000).map { UInt8($0 % 251) })
        try bytes.write(to: directory.appendingPathComponent(name))
        let (body, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/\(name)")!)
        let (_, missing) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/\(name.dropLast(2))cd")!)
        process.terminate()  // SIGTERM
        let rest = String(decoding: output.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(body == bytes)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "ETag") == "\"\(name)\"")
        #expect((missing as? HTTPURLResponse)?.statusCode == 404)
        #expect(process.terminationStatus == 0)
        #expect(rest.contains("stopped"))
    }

    @Test func maxAgeDeletesOldBlobs() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blobs-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = directory.appendingPathComponent(String(repeating: "0", count: 48))
        let fresh = directory.appendingPathComponent(String(repeating: "1", count: 48))
        try Data([1, 2, 3]).write(to: old)
        try Data([4, 5, 6]).write(to: fresh)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7_200)], ofItemAtPath: old.path)
        let (process, _, _) = try serve(["--dir", directory.path, "--max-age", "3600", "--sweep-interval", "1"])
        let giveUp = ContinuousClock.now + .seconds(10)
        while FileManager.default.fileExists(atPath: old.path), ContinuousClock.now < giveUp {
            try await Task.sleep(for: .milliseconds(100))
        }
        process.terminate()
        process.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: old.path))
        #expect(FileManager.default.fileExists(atPath: fresh.path))
    }

    @Test func rejectsABadPortAndASweepWithoutMaxAge() throws {
        let cli = try CLITests()
        #expect(try cli.run(["blobs", "serve", "--dir", cli.path("d"), "--port", "70000"]).status != 0)
        #expect(try cli.run(["blobs", "serve", "--dir", cli.path("d"), "--sweep-interval", "5"]).status != 0)
    }
}
