import Foundation
import Logging
import SealedPushBlobServer
import ServiceLifecycle

/// The gateway's own blob server (`overflow.listen`): serves the blob directory — attachments and content sent by
/// reference, all encrypted — to devices until graceful shutdown, sweeping blobs older than `overflow.maxAgeSeconds`.
struct BlobServerService: Service {
    let server: BlobServer
    let logger: Logger

    func run() async throws {
        try await server.start()
        logger.info("blobs listening", metadata: ["port": "\(server.port)"])
        // One line on standard output, for scripts and tests that asked for port 0.
        FileHandle.standardOutput.write(Data("blobs listening on port \(server.port)\n".utf8))
        try? await gracefulShutdown()
        await server.stop()
        logger.info("blob server stopped")
    }
}
