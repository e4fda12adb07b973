import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import SealedPushAPNsEmulator
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The API over HTTPS from the real `sealed-push-gateway serve` (issue 17 §10): the certificate and key from
/// `gateway.json`, reloaded on `SIGHUP` without dropping a connection, refused at start when unusable. Clients are
/// curl (a new connection each, trusting exactly one certificate) and a SwiftNIO + NIOSSL connection kept open
/// across the reload.
@Suite("Gateway process: TLS", .serialized)
struct GatewayTLSProcessTests {
    /// A certificate and key written to files (the key 0600).
    struct CertificateFiles {
        let certificate: String
        let key: String
        let pem: String

        static func write(to directory: URL, name: String) throws -> CertificateFiles {
            let generated = try EmulatorCertificate.generate()
            let certificate = directory.appendingPathComponent("\(name).crt").path
            let key = directory.appendingPathComponent("\(name).key").path
            try Data(generated.certificatePEM.utf8).write(to: URL(fileURLWithPath: certificate))
            try Data(generated.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: key))
            chmod(key, 0o600)
            return CertificateFiles(certificate: certificate, key: key, pem: generated.certificatePEM)
        }
    }

    /// Sets top-level members of the gateway's configuration file.
    static func configure(_ setup: GatewayWithEmulator, _ values: [String: Any]) throws {
        let url = URL(fileURLWithPath: setup.configPath)
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        for (key, value) in values { json[key] = value }
        try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).write(to: url)
    }

    /// `curl` over HTTPS trusting only `caFile`: (exit status, body).
    static func curl(_ port: Int, path: String = "/healthz", caFile: String) throws -> (status: Int32, body: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sS", "--max-time", "10", "--cacert", caFile, "https://127.0.0.1:\(port)\(path)"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        let body = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: body, as: UTF8.self))
    }

    static func waitForLog(_ path: String, _ text: String, occurrences: Int = 1) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while ContinuousClock.now < deadline {
            let log = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            if log.components(separatedBy: text).count - 1 >= occurrences { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("no \"\(text)\" in the gateway's log:\n" + GatewayProcess.tail(path))
    }

    @Test func servesHTTPSAndReloadsOnSIGHUPWithoutDroppingConnections() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let first = try CertificateFiles.write(to: setup.directory, name: "first")
        let second = try CertificateFiles.write(to: setup.directory, name: "second")
        let served = setup.directory.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        let certificate = served.appendingPathComponent("server.crt").path
        let key = served.appendingPathComponent("server.key").path
        func install(_ files: CertificateFiles) throws {
            // The way certbot and friends renew: new files moved into place.
            for (from, to) in [(files.certificate, certificate), (files.key, key)] {
                let staged = to + ".new"
                try? FileManager.default.removeItem(atPath: staged)
                try FileManager.default.copyItem(atPath: from, toPath: staged)
                chmod(staged, 0o600)
                guard rename(staged, to) == 0 else { throw TestFailure("rename \(staged)") }
            }
        }
        try install(first)
        // Listening on every address is allowed without allowPlainHTTP once the API is HTTPS.
        try Self.configure(setup, ["tls": ["certificateFile": "tls/server.crt", "keyFile": "tls/server.key"], "listen": "0.0.0.0:0"])
        let logPath = setup.directory.appendingPathComponent("serve.log").path
        let gateway = try await GatewayProcess.start(config: setup.configPath, environment: setup.environment, logPath: logPath)

        // HTTPS with the first certificate; a client trusting only the second refuses it; plain HTTP gets nothing.
        let answer = try Self.curl(gateway.port, caFile: first.certificate)
        #expect(answer.status == 0, "curl exit \(answer.status)")
        #expect(answer.body.contains("\"status\""), "\(answer.body)")
        #expect(try Self.curl(gateway.port, caFile: second.certificate).status != 0)
        let plain = try? await HTTPTestClient(port: gateway.port).send("GET", "/healthz")
        #expect(plain == nil || plain?.status != 200, "plain HTTP was answered")
        #expect(!GatewayProcess.tail(logPath).contains("plain HTTP beyond loopback"))

        // A connection opened now, trusting only the first certificate, stays usable across the reload.
        let kept = try await KeptTLSConnection.open(port: gateway.port, trusting: first.pem)
        #expect(try await kept.get("/healthz").hasPrefix("HTTP/1.1 200"))

        try install(second)
        kill(gateway.process.processIdentifier, SIGHUP)
        try await Self.waitForLog(logPath, "TLS certificate reloaded")
        #expect(try Self.curl(gateway.port, caFile: second.certificate).status == 0, "new connections get the new certificate")
        #expect(try Self.curl(gateway.port, caFile: first.certificate).status != 0)
        #expect(try await kept.get("/healthz").hasPrefix("HTTP/1.1 200"), "the connection open at the reload was dropped")

        // A reload that cannot work (a key that is not the certificate's) keeps serving the second certificate.
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: first.key, toPath: key)
        chmod(key, 0o600)
        kill(gateway.process.processIdentifier, SIGHUP)
        try await Self.waitForLog(logPath, "TLS reload failed")
        #expect(try Self.curl(gateway.port, caFile: second.certificate).status == 0)
        #expect(gateway.process.isRunning)
        try await kept.close()
        #expect(try await gateway.terminate() == 0)
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(!log.contains("PRIVATE KEY"), "key material in the log")
    }

    @Test func refusesUnusableCertificatesAtStart() async throws {
        let setup = try await GatewayWithEmulator.start()
        defer { setup.removeFiles(); Task { await setup.stop() } }
        let first = try CertificateFiles.write(to: setup.directory, name: "first")
        let second = try CertificateFiles.write(to: setup.directory, name: "second")
        let cases: [(String, [String: String], String)] = [
            ("a key others may read", ["certificateFile": first.certificate, "keyFile": first.key + ".644"], "chmod 600"),
            ("a key that is not the certificate's", ["certificateFile": first.certificate, "keyFile": second.key], "not the private key"),
            ("a missing certificate", ["certificateFile": first.certificate + ".gone", "keyFile": first.key], "tls.certificateFile"),
            ("a certificate file that is a key", ["certificateFile": first.key, "keyFile": first.key], "tls.certificateFile"),
        ]
        try FileManager.default.copyItem(atPath: first.key, toPath: first.key + ".644")
        chmod(first.key + ".644", 0o644)
        for (what, tls, expected) in cases {
            try Self.configure(setup, ["tls": tls])
            let result = try GatewayExecutableTests.run(["serve", "--config", setup.configPath])
            #expect(result.status == 1, "\(what): exit \(result.status)")
            #expect(result.stderr.contains(expected), "\(what): \(result.stderr)")
            #expect(!result.stderr.contains("PRIVATE KEY"), "\(what): key material in the message")
        }
    }
}

/// One HTTP/1.1 connection over TLS, kept open between requests: one task owns the channel (`executeThenClose`),
/// writing the requests it is given and collecting the responses it reads, until the server closes or ``close()``.
final class KeptTLSConnection: Sendable {
    /// Requests to write, in order.
    private let requests: AsyncStream<ByteBuffer>.Continuation
    /// Complete responses read and not yet taken, and whether the connection ended.
    private let received = Locked<(responses: [String], ended: Bool)>(([], false))
    private let owner: Task<Void, Never>

    private init(channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) {
        let (toWrite, requests) = AsyncStream.makeStream(of: ByteBuffer.self)
        self.requests = requests
        let received = self.received
        owner = Task {
            try? await channel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await request in toWrite { try await outbound.write(request) }
                    }
                    var pending = ""
                    for try await chunk in inbound {
                        pending += String(buffer: chunk)
                        while let (response, rest) = KeptTLSConnection.split(pending) {
                            received.withLock { $0.responses.append(response) }
                            pending = rest
                        }
                    }
                    group.cancelAll()  // the server closed: nothing more to write
                }
            }
            received.withLock { $0.ended = true }
        }
    }

    static func open(port: Int, trusting pem: String) async throws -> KeptTLSConnection {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return KeptTLSConnection(channel: channel)
    }

    /// Sends a GET and returns the whole response text (status line, headers, body).
    func get(_ path: String) async throws -> String {
        requests.yield(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline {
            let (response, ended): (String?, Bool) = received.withLock { state in
                state.responses.isEmpty ? (nil, state.ended) : (state.responses.removeFirst(), false)
            }
            if let response { return response }
            if ended { throw TestFailure("the server closed the kept connection") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("no answer on the kept connection within 10 s")
    }

    /// Closes the connection (its owning task ends, and `executeThenClose` closes the channel).
    func close() async throws {
        requests.finish()
        owner.cancel()
        await owner.value
    }

    /// One complete response (headers and a Content-Length body) off the front of `text`, and the rest.
    static func split(_ text: String) -> (String, String)? {
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        let head = text[..<end.lowerBound]
        var length = 0
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        let bodyStart = end.upperBound
        guard text.utf8.distance(from: bodyStart, to: text.endIndex) >= length else { return nil }
        let bodyEnd = text.utf8.index(bodyStart, offsetBy: length)
        return (String(text[..<bodyEnd]), String(text[bodyEnd...]))
    }
}
