import ArgumentParser
import Foundation
import SealedPushBlobServer
import SealedPushCore
import SealedPushServer

/// `sealed-push blobs serve`: serves a blob directory over HTTP/1.1 until interrupted.
struct BlobsServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a blob directory over HTTP (GET/HEAD /<name>, Range, ETag, immutable caching) until interrupted.",
        discussion: """
            Devices fetch http://HOST:PORT/<blob name>. Put the server behind a TLS terminator for anything but \
            loopback and tests. With --max-age, blobs (and abandoned partial writes) older than that are deleted \
            every --sweep-interval seconds; choose at least the longest envelope lifetime plus a margin.
            """)

    @Option(name: .long, help: "The blob directory (created 0700 if missing).")
    var dir: String

    @Option(name: .long, help: "Address to bind.")
    var host = "127.0.0.1"

    @Option(name: .long, help: "Port (0 = any free port; the bound port is printed).")
    var port = 0

    @Option(name: .customLong("max-age"), help: ArgumentHelp("Delete blobs older than this.", valueName: "SECONDS"))
    var maxAge: Int?

    @Option(
        name: .customLong("sweep-interval"),
        help: ArgumentHelp("How often to delete expired blobs (default: a tenth of --max-age, 1...3600).", valueName: "SECONDS"))
    var sweepInterval: Int?

    @Option(name: .customLong("max-connections"), help: "Connections served at once.")
    var maxConnections = 512

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let maxAge, maxAge <= 0 { throw ValidationError("--max-age must be a positive number of seconds") }
        if let sweepInterval {
            guard maxAge != nil else { throw ValidationError("--sweep-interval needs --max-age") }
            guard sweepInterval > 0 else { throw ValidationError("--sweep-interval must be positive") }
        }
        guard maxConnections > 0 else { throw ValidationError("--max-connections must be positive") }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try FileSystemBlobStore(directory: dir)
            var configuration = BlobServerConfiguration(host: host, port: port)
            configuration.maxConnections = maxConnections
            if let maxAge {
                configuration.expiry = .init(
                    maxAge: .seconds(maxAge), sweepInterval: sweepInterval.map { .seconds($0) })
            }
            let server = BlobServer(store: store, configuration: configuration) { result in
                switch result {
                case .success(let names) where !names.isEmpty:
                    CLIIO.writeStderr("expired \(names.count) blob(s)\n")
                case .success:
                    break
                case .failure(let error):
                    CLIIO.writeStderr("expiry sweep failed: \(error)\n")
                }
            }
            try await server.start()
            let expiry = maxAge.map { ", deleting blobs older than \($0) s" } ?? ""
            CLIIO.writeStdout("serving blobs from \(dir) on http://\(host):\(server.port)/\(expiry)\n")
            await EmulatorCommand.waitForTerminationSignal()
            await server.stop()
            CLIIO.writeStdout("stopped\n")
        }
    }
}
